// How a job is cut into chunks and how many chunks a worker may hold at once, from the time per
// item measured on the workers. Pure functions of their arguments, so that they can be tested
// and tuned alone; the constants say what each number is for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

namespace fiber::detail {

// The mean time per item of one task, as measured on the workers.
struct TaskTiming {
  double seconds_per_item = 0;
  bool measured = false;
};

// The measured timing of every task the runtime has run.
class TaskTimings {
 public:
  // Weight of the newest chunk in the running mean (older ones fade out).
  static constexpr double kNewestWeight = 0.2;

  // The timing of `task`, or null before its first measurement.
  const TaskTiming* of(const std::string& task) const;
  // A chunk of `items` items of `task` ran in `elapsed_ns`.
  void record(const std::string& task, std::uint64_t elapsed_ns, std::uint32_t items);

 private:
  std::unordered_map<std::string, TaskTiming> timings_;
  // Consecutive chunks are of the same task: its entry is remembered (map entries do not move),
  // and names compared rather than hashed.
  mutable const std::pair<const std::string, TaskTiming>* last_ = nullptr;
};

namespace chunk_policy {

// An automatic chunk should run about this long: long enough that the per-chunk cost of a round
// trip is small beside it, short enough to balance well.
inline constexpr double kTargetChunkSeconds = 0.5e-3;
// A chunk at least this long goes to a worker alone: the round trip is small beside it.
inline constexpr double kAloneChunkSeconds = 2e-3;
// Shorter chunks are queued behind the running one, about this much work in all: it hides the
// round trip, and no worker holds work that another could start.
inline constexpr double kQueuedSeconds = 200e-6;
inline constexpr std::size_t kMinQueued = 2;
inline constexpr std::size_t kMaxQueued = 64;
// A guided chunk is at most a fair share of what is left among the workers divided by this:
// chunks shrink toward the end of a call, so that its tail stays balanced.
inline constexpr std::size_t kChunksPerFairShare = 2;
// Below this a measured time per item is taken as this (no division by zero).
inline constexpr double kShortestItemSeconds = 1e-9;

// The next chunk's size: `requested` (the job's chunksize; 0 for automatic) up to what is
// `remaining`; automatic sizes start at 1 (to measure the task) and are then guided
// (kChunksPerFairShare).
std::size_t chunk_size(std::size_t requested, std::size_t remaining, std::size_t workers,
                       const TaskTiming* timing);

// How many chunks of `chunk` items a worker that answered just now may hold: 1 until the task is
// measured and for long chunks, more for short ones.
std::size_t in_flight_limit(const TaskTiming* timing, std::size_t chunk);

}  // namespace chunk_policy
}  // namespace fiber::detail
