// Reads one entry of a result message (wire/result_entry.hpp) for the dispatcher: the chunk's
// header, each item's outcome as a JobState::ItemResult that points into the message, a failed
// item's error as a fiber::TaskError, and the reason a chunk's task process died. Throws
// ProtocolError on an entry cut short or too long.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "caller/job_state.hpp"
#include "fiber/pool.hpp"
#include "wire/result_entry.hpp"

namespace fiber::detail {

class ResultReader {
 public:
  // `entry` lies `offset` bytes into the message that results will point into.
  ResultReader(std::span<const char> entry, std::uint64_t offset);

  const ResultHeader& header() const { return reader_.header(); }
  // The header's `count` item outcomes of task `task`, run on `worker`, into `results`; returns
  // how many failed.
  std::uint64_t items(const std::string& task, const WorkerInfo& worker,
                      std::vector<JobState::ItemResult>& results);
  // Why the task process died (ChunkStatus::crashed or timed_out), after items().
  std::string reason();

 private:
  std::span<const char> entry_;
  std::uint64_t offset_;
  ResultEntryReader reader_;
};

}  // namespace fiber::detail
