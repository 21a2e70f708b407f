#include "support/process_stats.hpp"

#include <time.h>

#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <sstream>
#include <string>

namespace fiber_test {
namespace {

// Empty if the file is gone or its read fails: a process that ends between the open and the
// read makes read() fail (ESRCH), which libstdc++'s stream buffer throws for whatever the
// stream's exception mask (as fiberrun/process_tree.cpp found).
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  try {
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  } catch (const std::ios_base::failure&) {
    return {};
  }
}

}  // namespace

// proc(5): fields 14 and 15, after "pid (comm)".
long cpu_ticks(long pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto end_of_name = text.rfind(')');
  if (end_of_name == std::string::npos) return 0;
  std::istringstream fields(text.substr(end_of_name + 2));
  std::string field;
  constexpr int kUtimeField = 11;  // counted from the state, field 3 of proc(5)
  for (int i = 0; i < kUtimeField && fields >> field; ++i) {
  }
  long utime = 0, stime = 0;
  fields >> utime >> stime;
  return utime + stime;
}

long thread_switches(const std::filesystem::path& status_file) {
  std::ifstream status(status_file);
  long total = 0;
  for (std::string line; std::getline(status, line);) {
    for (std::string key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
      if (line.rfind(key, 0) == 0) total += std::stol(line.substr(key.size()));
    }
  }
  return total;
}

long cpu_ticks_with_children(long pid) {
  long ticks = cpu_ticks(pid);
  const std::string pid_text = std::to_string(pid);
  std::istringstream children(read_file("/proc/" + pid_text + "/task/" + pid_text + "/children"));
  for (long child = 0; children >> child;) ticks += cpu_ticks(child);
  return ticks;
}

long wakeups_of_threads(long pid) {
  long total = 0;
  std::error_code error;
  for (const auto& thread :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    total += thread_switches(thread.path() / "status");
  }
  return total;
}

std::string environment_value(long pid, const std::string& name) {
  std::istringstream environment(read_file("/proc/" + std::to_string(pid) + "/environ"));
  const std::string prefix = name + "=";
  for (std::string entry; std::getline(environment, entry, '\0');) {
    if (entry.rfind(prefix, 0) == 0) return entry.substr(prefix.size());
  }
  return "";
}

double own_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace fiber_test
