// The Pipe reading ends a fiber::Process was given: collected while its arguments are encoded
// (ReadEndsPassed), held on the broker while it runs, and let go when it ends however it ended
// (ProcessReadEnds), so that a sender to an end its Process never read is told the reader is gone
// (queue_broker.hpp: pipe_reader_ended) instead of filling the master.
#pragma once

#include <mutex>
#include <vector>

#include "fiber/detail/pipe_channel.hpp"

namespace fiber::detail {

// The collection of readable ends serialized on this thread (PipeChannel::note_read_end), if one
// is made now.
std::vector<PipeChannel>*& read_ends_collected();

// While it lives, the readable ends serialized on this thread are collected.
class ReadEndsPassed {
 public:
  ReadEndsPassed();
  ~ReadEndsPassed();
  ReadEndsPassed(const ReadEndsPassed&) = delete;
  ReadEndsPassed& operator=(const ReadEndsPassed&) = delete;

  std::vector<PipeChannel> take() { return std::move(collected_); }

 private:
  std::vector<PipeChannel> collected_;
  std::vector<PipeChannel>* outer_;  // a collection this one is within, if any
};

// One Process's ends, held from before its call is submitted until its end, which is told by the
// thread that stores its outcome, and again by its join and its destruction (once counts).
class ProcessReadEnds {
 public:
  explicit ProcessReadEnds(std::vector<PipeChannel> ends);
  void ended();

 private:
  std::mutex mutex_;
  std::vector<PipeChannel> ends_;  // empty once ended
};

}  // namespace fiber::detail
