#include "run/network_memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "run/command_line.hpp"

namespace fiber::rl {

namespace {

// Of the machine's memory, what the parameter copies may take: the rest is for the system, the
// environments, batches and the noise table.
constexpr double kMemoryShareForParameters = 0.8;
constexpr int kBytesPerParameter = sizeof(double);
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double physical_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

int workers_on_this_node(int workers) {
  int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return workers > 0 ? std::min(workers, cores) : cores;
}

double estimated_bytes(const NetworkCopies& copies) {
  double held = copies.master_copies + copies.worker_copies * workers_on_this_node(copies.workers);
  return copies.parameters * kBytesPerParameter * held;
}

}  // namespace

double mlp_parameters(const std::vector<long>& layer_sizes) {
  double parameters = 0;
  for (std::size_t l = 0; l + 1 < layer_sizes.size(); ++l) {
    parameters +=
        (static_cast<double>(layer_sizes[l]) + 1) * static_cast<double>(layer_sizes[l + 1]);
  }
  return parameters;
}

void check_network_memory(const CLI::App& app, const NetworkCopies& copies) {
  double bytes = estimated_bytes(copies);
  double memory = physical_memory_bytes();
  if (bytes <= kMemoryShareForParameters * memory) return;
  reject(app,
         fmt::format("--hidden: the networks' {:.0f} parameters would need about {:.1f} GiB on "
                     "this node ({} copies in the master, {} per worker x {} workers, {} "
                     "bytes each), more than {:.0f}% of its {:.1f} GiB of memory; use smaller "
                     "layers",
                     copies.parameters, bytes / kGiB, copies.master_copies, copies.worker_copies,
                     workers_on_this_node(copies.workers), kBytesPerParameter,
                     kMemoryShareForParameters * 100, memory / kGiB));
}

}  // namespace fiber::rl
