#include "dispatch/worker_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fiber::detail {
namespace {

// The first `wanted` of `offered` not in `held`, or empty if fewer are free.
std::optional<std::vector<int>> free_ones(const std::vector<int>& offered,
                                          const std::set<int>& held, int wanted, int& free) {
  std::vector<int> chosen;
  free = 0;
  for (int id : offered) {
    if (held.contains(id)) continue;
    ++free;
    if (static_cast<int>(chosen.size()) < wanted) chosen.push_back(id);
  }
  if (free < wanted) return std::nullopt;
  return chosen;
}

}  // namespace

std::optional<Placement> place(const WorkerShape& shape, const NodeOffer& node,
                               const std::vector<const Placement*>& taken, std::string& missing) {
  std::set<int> cpus_held;
  std::set<int> gpus_held;
  for (const Placement* other : taken) {
    cpus_held.insert(other->cpus.begin(), other->cpus.end());
    gpus_held.insert(other->gpus.begin(), other->gpus.end());
  }
  Placement placement{shape, {}, {}};
  int free = 0;
  if (shape.cores > 0) {
    auto cpus = free_ones(node.cpus, cpus_held, shape.cores, free);
    if (!cpus) {
      missing = fmt::format("{} has {} of its {} cores free, a worker needs {}", node.host, free,
                            node.cpus.size(), shape.cores);
      return std::nullopt;
    }
    placement.cpus = std::move(*cpus);
  }
  if (shape.gpus > 0) {
    auto gpus = free_ones(node.gpus, gpus_held, shape.gpus, free);
    if (!gpus) {
      missing = node.gpus.empty()
                    ? fmt::format(
                          "{} has no GPUs (FIBER_GPUS, SLURM_STEP_GPUS or SLURM_JOB_GPUS "
                          "name none there), a worker needs {}",
                          node.host, shape.gpus)
                    : fmt::format("{} has {} of its {} GPUs free, a worker needs {}", node.host,
                                  free, node.gpus.size(), shape.gpus);
      return std::nullopt;
    }
    placement.gpus = std::move(*gpus);
  }
  return placement;
}

int slots_of(const WorkerShape& shape) { return std::max(1, shape.cores); }

std::string describe(const WorkerShape& shape) {
  std::string text = shape.cores > 0 ? fmt::format("{} cores", shape.cores) : "1 slot";
  if (shape.memory_bytes > 0) text += fmt::format(", {} bytes", shape.memory_bytes);
  if (shape.gpus > 0) text += fmt::format(", {} GPU{}", shape.gpus, shape.gpus == 1 ? "" : "s");
  return text;
}

}  // namespace fiber::detail
