#include "fiberrun/process_tree.hpp"

#include <cstdio>
#include <fstream>
#include <ios>
#include <iterator>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace fiberrun {
namespace {

// The parent of the process whose stat file is `stat`, or -1 if it is gone or unreadable.
// (proc(5): "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so the fields
// are read after its last ')'.)
pid_t parent_of(const std::filesystem::path& stat) {
  std::ifstream in(stat);
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    // The process ended between the open and the read (ESRCH): libstdc++'s stream buffer throws
    // for a failed read() whatever the stream's exception mask.
    return -1;
  }
  auto end_of_name = text.rfind(')');
  if (end_of_name == std::string::npos) return -1;
  char state = 0;
  long parent = -1;
  if (std::sscanf(text.c_str() + end_of_name + 1, " %c %ld", &state, &parent) != 2) return -1;
  return static_cast<pid_t>(parent);
}

}  // namespace

std::size_t count_descendants(pid_t root, const std::filesystem::path& proc) {
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(proc, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t parent = parent_of(entry.path() / "stat");
    if (parent >= 0) children[parent].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::size_t count = 0;
  std::vector<pid_t> pending{root};
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    auto found = children.find(pid);
    if (found == children.end()) continue;
    count += found->second.size();
    pending.insert(pending.end(), found->second.begin(), found->second.end());
  }
  return count;
}

}  // namespace fiberrun
