#include "worker/run_queue.hpp"

#include <algorithm>
#include <utility>

#include "wire/run_entry.hpp"

namespace fiber::detail {

void RunQueue::add_from_master(std::span<const char> entry) {
  RunBody run(entry);
  if (!(run.header().flags & kRunRelayFallback)) {
    add(entry);
    if (run.header().flags & kRunFromRelay) {
      // A stand-in: a relay's copy that came before it fills it.
      std::erase_if(early_relayed_, [&](const Bytes& relayed) { return fill_relayed(relayed); });
    }
    return;
  }
  std::uint64_t chunk_id = run.header().chunk_id;
  fill_stand_in([&](const RunBody& stand_in) { return stand_in.header().chunk_id == chunk_id; },
                entry);
}

void RunQueue::add_relayed(std::span<const char> entry) {
  if (fill_relayed(entry)) return;
  if (early_relayed_.size() == kMaxEarlyRelayed) early_relayed_.pop_front();
  early_relayed_.emplace_back(entry.begin(), entry.end());
}

Bytes RunQueue::pop_front() {
  Bytes entry = std::move(queue_.front());
  queue_.pop_front();
  return entry;
}

std::deque<Bytes> RunQueue::take_all() { return std::exchange(queue_, {}); }

// The stand-in that waits for a relay's copy holds the first relay's chunk id as its item.
bool RunQueue::fill_relayed(std::span<const char> entry) {
  std::uint64_t relayed_chunk = RunBody(entry).header().chunk_id;
  return fill_stand_in(
      [&](const RunBody& stand_in) { return stand_in.relay_chunk() == relayed_chunk; }, entry);
}

template <class Matches>
bool RunQueue::fill_stand_in(const Matches& matches, std::span<const char> entry) {
  for (auto& queued : queue_) {
    RunBody stand_in(queued);
    if (!(stand_in.header().flags & kRunFromRelay) || !matches(stand_in)) continue;
    RunHeader header = stand_in.header();
    header.flags &= ~kRunFromRelay;
    queued = with_header(entry, header);
    return true;
  }
  return false;
}

}  // namespace fiber::detail
