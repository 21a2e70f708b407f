#include "dispatch/chunk_policy.hpp"

#include <algorithm>

namespace fiber::detail {

const TaskTiming* TaskTimings::of(const std::string& task) const {
  if (!last_ || last_->first != task) {
    auto found = timings_.find(task);
    if (found == timings_.end()) return nullptr;
    last_ = &*found;
  }
  return last_->second.measured ? &last_->second : nullptr;
}

void TaskTimings::record(const std::string& task, std::uint64_t elapsed_ns, std::uint32_t items) {
  if (items == 0) return;
  auto& timing = timings_[task];
  double per_item = static_cast<double>(elapsed_ns) * 1e-9 / items;
  timing.seconds_per_item =
      timing.measured ? (1 - kNewestWeight) * timing.seconds_per_item + kNewestWeight * per_item
                      : per_item;
  timing.measured = true;
}

namespace chunk_policy {

std::size_t chunk_size(std::size_t requested, std::size_t remaining, std::size_t workers,
                       const TaskTiming* timing) {
  if (requested > 0) return std::min(requested, remaining);
  if (!timing) return 1;  // probe the cost first
  std::size_t guided = std::max<std::size_t>(
      1, remaining / (kChunksPerFairShare * std::max<std::size_t>(1, workers)));
  double per_item = std::max(timing->seconds_per_item, kShortestItemSeconds);
  auto by_time = static_cast<std::size_t>(std::max(1.0, kTargetChunkSeconds / per_item));
  return std::min({by_time, guided, remaining});
}

std::size_t in_flight_limit(const TaskTiming* timing, std::size_t chunk) {
  if (!timing) return 1;
  double chunk_seconds = timing->seconds_per_item * static_cast<double>(chunk);
  if (chunk_seconds >= kAloneChunkSeconds) return 1;
  return static_cast<std::size_t>(
      std::clamp(kQueuedSeconds / std::max(chunk_seconds, kShortestItemSeconds),
                 static_cast<double>(kMinQueued), static_cast<double>(kMaxQueued)));
}

}  // namespace chunk_policy
}  // namespace fiber::detail
