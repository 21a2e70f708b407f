#include "worker/mpi_segment.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "this_process.hpp"

namespace fiber::detail {

bool is_own_mpi_segment(std::string_view path, std::string_view host, std::string_view local_rank) {
  if (local_rank.empty()) return false;
  // Open MPI names a node by its host name's first label (orte_keep_fqdn_hostnames is off).
  std::string prefix = "/vader_segment.";
  prefix.append(host.substr(0, host.find('.'))).append(".");
  std::string suffix = ".";
  suffix.append(local_rank);
  const auto name = path.find(prefix);
  if (name == std::string_view::npos) return false;
  const std::string_view rest = path.substr(name + prefix.size());
  // <uid>.<job>.<local rank>: nothing after the rank, and no folder in between.
  return rest.find('/') == std::string_view::npos && rest.size() > suffix.size() &&
         rest.ends_with(suffix);
}

void unlink_own_mpi_segment() {
  // Set by the node daemon for every process it starts.
  const char* local_rank = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!local_rank) return;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto path = line.find('/');
    if (path == std::string::npos) continue;
    const std::string file = line.substr(path);
    if (is_own_mpi_segment(file, this_process().host, local_rank)) {
      ::unlink(file.c_str());
      return;
    }
  }
}

}  // namespace fiber::detail
