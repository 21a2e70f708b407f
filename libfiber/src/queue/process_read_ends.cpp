#include "queue/process_read_ends.hpp"

#include <utility>

namespace fiber::detail {

ReadEndsPassed::ReadEndsPassed() : outer_(read_ends_collected()) {
  read_ends_collected() = &collected_;
}

ReadEndsPassed::~ReadEndsPassed() { read_ends_collected() = outer_; }

ProcessReadEnds::ProcessReadEnds(std::vector<PipeChannel> ends) : ends_(std::move(ends)) {
  for (const auto& end : ends_) end.reader_starts();
}

void ProcessReadEnds::ended() {
  std::lock_guard lock(mutex_);
  for (const auto& end : ends_) end.reader_ended();
  ends_.clear();
}

}  // namespace fiber::detail
