// A run entry: one chunk of a job, as the master sends it (an entry of a run message; a relay's
// or a replay's entry) and as the worker or the master writes it to a task process
// (task_frames.hpp). RunHeader, the task's name (name_size bytes), count + 1 u64 item offsets
// relative to the first item, then the items' bytes: item i is [offsets[i], offsets[i + 1]), and
// the last offset is where the entry ends. RunEntryParts writes one, RunBody reads one in place.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "fiber/serialization.hpp"

namespace fiber::detail {

// RunHeader::flags
inline constexpr std::uint32_t kRunIsolated = 1;  // run in the worker's task process
// A pool's initializer (starts a fresh task process) and a pool's broadcast calls: replayed, in
// order, in every new task process; a broadcast replaces the previous one of the same task.
inline constexpr std::uint32_t kRunInitializer = 2;
inline constexpr std::uint32_t kRunBroadcast = 4;
// A broadcast whose body comes from another worker of the spawn (a relay): this entry, a
// stand-in (stand_in_entry), holds one item, the first relay's u64 chunk id, and stands in the
// queue until a relay's copy arrives.
inline constexpr std::uint32_t kRunFromRelay = 8;
// The whole body of an entry sent before with kRunFromRelay, sent by the master itself because
// the relay was lost; ignored if the relay's copy came first.
inline constexpr std::uint32_t kRunRelayFallback = 16;
// With kRunInitializer: an initializer that sets only its task process's own state, the same
// each time it runs (PoolOptions::initializer_runs_ahead). A parked worker keeps it and runs it
// in its standby task process before the next pool asks (docs/design.md, "Standby task
// processes").
inline constexpr std::uint32_t kRunAhead = 32;

struct RunHeader {
  std::uint64_t chunk_id;
  std::uint32_t name_size;
  std::uint32_t count;
  std::uint32_t flags;
  std::uint32_t timeout_ms;  // per item; 0: none
  // Chunks of tasks a task process runs before a fresh one replaces it (maxtasksperchild); 0: no
  // limit.
  std::uint32_t tasks_per_process = 0;
  // The longest silence of a worker running this chunk: it sends a heartbeat after that long
  // (the pool's worker_timeout / kHeartbeatsPerWorkerTimeout).
  std::uint32_t heartbeat_ms = 0;
};

// Heartbeats a busy worker sends per worker_timeout of silence: enough that a late one or two do
// not make it look lost, few enough that a task shorter than worker_timeout / this sends none
// (the default 10 s gives 1.25 s: the paper's 0.92 s ES tasks cost the master no heartbeat).
inline constexpr int kHeartbeatsPerWorkerTimeout = 8;

// A run entry to write, as views of its parts: nothing is copied until it is written, and a
// sender may send the items in place after the head. The header's name_size and count are
// written as those of `task` and `offsets`.
struct RunEntryParts {
  RunHeader header;
  std::string_view task;
  std::span<const std::uint64_t> offsets;  // count + 1, relative to the first item
  std::span<const char> items;

  std::uint64_t size() const;
  // Everything before the items.
  Bytes head() const;
  // The whole entry, appended.
  void append_to(Bytes& out) const;
};

// A stand-in's entry (kRunFromRelay must be in `header`'s flags): no task, and one item, the
// chunk id of the relay whose copy fills it.
Bytes stand_in_entry(const RunHeader& header, std::uint64_t relay_chunk);
// A copy of run entry `entry` under `header`, but for the entry's own name_size and count: a
// relay's copy that fills a stand-in takes the stand-in's chunk id and flags.
Bytes with_header(std::span<const char> entry, RunHeader header);

// A run entry, read in place: it must outlive the RunBody. Throws ProtocolError, naming the
// entry as `what`, if it is cut short or longer than its last offset; item() throws it if that
// item's offsets do not add up.
class RunBody {
 public:
  explicit RunBody(std::span<const char> entry, std::string_view what = "a run entry");
  const RunHeader& header() const { return header_; }
  std::string_view task() const { return task_; }
  std::uint32_t count() const { return header_.count; }
  std::span<const char> item(std::uint32_t index) const;
  // A stand-in's one item: the chunk id of the relay's copy it waits for.
  std::uint64_t relay_chunk() const;

 private:
  std::uint64_t offset(std::uint32_t index) const;

  RunHeader header_;
  std::string_view task_;
  std::span<const char> offsets_;
  std::span<const char> items_;
};

}  // namespace fiber::detail
