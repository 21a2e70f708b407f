#include "worker/worker_shape.hpp"

#include <sched.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "id_list.hpp"
#include "log.hpp"

namespace fiber::detail {
namespace {

// The variables thread pools read for their size: OpenMP (and PyTorch through it), OpenBLAS,
// MKL, numexpr, Apple's Accelerate (veclib), BLIS. Ray sets the first for its workers likewise.
constexpr std::array kThreadVariables = {"OMP_NUM_THREADS",        "OPENBLAS_NUM_THREADS",
                                         "MKL_NUM_THREADS",        "NUMEXPR_NUM_THREADS",
                                         "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"};

// What separates FIBER_GPUS's parts per host: "nodeA=0,1 nodeB=2" or "nodeA=0,1;nodeB=2".
constexpr std::string_view kHostSeparators = " ;";

// FIBER_GPUS's list for `host`: the whole value if it names no host, else the part "host=...".
std::string_view gpus_for_host(std::string_view spec, const std::string& host) {
  if (spec.find('=') == std::string_view::npos) return spec;
  while (!spec.empty()) {
    auto end = spec.find_first_of(kHostSeparators);
    std::string_view part = spec.substr(0, end);
    if (part.empty()) {  // (separators in a row)
      spec = spec.substr(1);
      continue;
    }
    auto equals = part.find('=');
    if (equals == std::string_view::npos) {
      throw std::invalid_argument("fiber: FIBER_GPUS mixes a list with host=list parts");
    }
    if (part.substr(0, equals) == host) return part.substr(equals + 1);
    if (end == std::string_view::npos) break;
    spec = spec.substr(end + 1);
  }
  return {};
}

// The variables a worker's shape set, comma-separated: a worker given another shape later sets
// them again, and Python's task processes keep them over the master's (fiber/_calls.py).
constexpr const char* kShapeVariables = "FIBER_SHAPE_VARIABLES";

bool was_set_here(std::string_view name) {
  const char* set = std::getenv(kShapeVariables);
  if (!set) return false;
  std::string_view names = set;
  while (!names.empty()) {
    auto comma = names.find(',');
    if (names.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    names = names.substr(comma + 1);
  }
  return false;
}

}  // namespace

std::string offered_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return format_id_list(cpus);
}

std::string offered_gpus(const std::string& host) {
  if (const char* spec = std::getenv("FIBER_GPUS")) {
    try {
      return format_id_list(parse_id_list(gpus_for_host(spec, host)));
    } catch (const std::invalid_argument& error) {
      log::warn("FIBER_GPUS={}: {}; {} offers no GPUs", spec, error.what(), host);
      return {};
    }
  }
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    const char* list = std::getenv(name);
    if (!list) continue;
    try {
      return format_id_list(parse_id_list(list));
    } catch (const std::invalid_argument& error) {
      log::warn("{}={}: {}; {} offers no GPUs", name, list, error.what(), host);
      return {};
    }
  }
  return {};
}

void take_shape(const std::string& cpus, const std::string& gpus, unsigned threads) {
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : parse_id_list(cpus)) CPU_SET(cpu, &set);
    // Every thread (MPI's, UCX's and PMIx's too): sched_setaffinity binds one thread.
    std::error_code error;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", error)) {
      pid_t tid = static_cast<pid_t>(std::atol(task.path().filename().c_str()));
      if (sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH) {
        log::warn("cannot bind thread {} to CPUs {}: {}", tid, cpus, std::strerror(errno));
      }
    }
  }
  std::string set;  // the names set, for Python's task processes (fiber/_calls.py)
  if (threads > 0) {
    std::string count = std::to_string(threads);
    for (const char* name : kThreadVariables) {
      if (std::getenv(name) && !was_set_here(name)) continue;  // the job's own choice
      setenv(name, count.c_str(), /*overwrite=*/1);
      set += std::string(set.empty() ? "" : ",") + name;
    }
  }
  if (!gpus.empty()) {
    setenv("CUDA_VISIBLE_DEVICES", gpus.c_str(), /*overwrite=*/1);
    set += std::string(set.empty() ? "" : ",") + "CUDA_VISIBLE_DEVICES";
  }
  setenv(kShapeVariables, set.c_str(), /*overwrite=*/1);
}

}  // namespace fiber::detail
