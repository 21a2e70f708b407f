#include "dispatch/silence_queue.hpp"

#include <limits>

namespace fiber::detail {

void SilenceQueue::watch(int id, Clock::duration worker_timeout, Clock::time_point heard) {
  auto index = static_cast<std::size_t>(id);
  if (index >= entries_.size()) entries_.resize(index + 1);
  Entry entry{worker_timeout, heard, id};
  auto& current = entries_[index];
  if (current == entry) return;
  if (current) order_.erase(*current);
  order_.insert(entry);
  current = entry;
}

void SilenceQueue::unwatch(int id) {
  auto index = static_cast<std::size_t>(id);
  if (index >= entries_.size() || !entries_[index]) return;
  order_.erase(*entries_[index]);
  entries_[index].reset();
}

void SilenceQueue::clear() {
  order_.clear();
  entries_.clear();
}

std::optional<int> SilenceQueue::silent(Clock::time_point now, const Allowed& allowed) const {
  for (auto group = order_.begin(); group != order_.end();) {
    if (now - group->heard > allowed(group->worker_timeout)) return group->id;
    // The next group: past every entry with this timeout.
    group = order_.upper_bound(
        {group->worker_timeout, Clock::time_point::max(), std::numeric_limits<int>::max()});
  }
  return std::nullopt;
}

}  // namespace fiber::detail
