#include "queue/read_ahead.hpp"

#include <algorithm>
#include <iterator>

namespace fiber::detail {

std::vector<Bytes> ReadAhead::take(const QueueAddress& queue, std::size_t most,
                                   Clock::time_point now) {
  std::vector<Bytes> taken;
  auto found = held_.find(key_of(queue));
  if (found == held_.end()) return taken;
  auto& items = found->second.items;
  while (taken.size() < most && !items.empty()) {
    taken.push_back(std::move(items.front()));
    items.pop_front();
  }
  found->second.last_taken = now;
  if (items.empty()) {  // all of it was taken: read further ahead next time
    held_.erase(found);
    auto& window = windows_.try_emplace(key_of(queue), kFirstReadAhead).first->second;
    window = std::min(kReadAheadItems, window * kReadAheadGrowth);
  }
  return taken;
}

std::size_t ReadAhead::window(const QueueAddress& queue) const {
  auto found = windows_.find(key_of(queue));
  return found == windows_.end() ? kFirstReadAhead : found->second;
}

void ReadAhead::keep(const QueueAddress& queue, std::vector<Bytes> items, Clock::time_point now) {
  if (items.empty()) return;
  auto [found, added] = held_.try_emplace(key_of(queue));
  Held& held = found->second;
  if (added) {
    held.queue = queue;
    held.last_taken = now;
  }
  held.items.insert(held.items.end(), std::make_move_iterator(items.begin()),
                    std::make_move_iterator(items.end()));
}

std::size_t ReadAhead::size(const QueueAddress& queue) const {
  auto found = held_.find(key_of(queue));
  return found == held_.end() ? 0 : found->second.items.size();
}

bool ReadAhead::empty() const { return held_.empty(); }

template <class Expired>
std::vector<ReadAhead::Returned> ReadAhead::remove_if(Expired expired) {
  std::vector<Returned> returned;
  for (auto at = held_.begin(); at != held_.end();) {
    if (!expired(at->second)) {
      ++at;
      continue;
    }
    auto& items = at->second.items;
    returned.push_back(
        {at->second.queue,
         {std::make_move_iterator(items.begin()), std::make_move_iterator(items.end())}});
    at = held_.erase(at);
  }
  return returned;
}

std::vector<ReadAhead::Returned> ReadAhead::expired(Clock::time_point now) {
  auto returned = remove_if([&](const Held& held) { return held.last_taken + lease_ <= now; });
  for (const auto& back : returned) {
    auto& window = windows_.try_emplace(key_of(back.queue), kFirstReadAhead).first->second;
    window = std::max<std::size_t>(1, window / kReadAheadShrink);
  }
  return returned;
}

std::vector<ReadAhead::Returned> ReadAhead::all() {
  return remove_if([](const Held&) { return true; });
}

std::optional<ReadAhead::Clock::time_point> ReadAhead::next_expiry() const {
  std::optional<Clock::time_point> next;
  for (const auto& [key, held] : held_) {
    auto expiry = held.last_taken + lease_;
    if (!next || expiry < *next) next = expiry;
  }
  return next;
}

}  // namespace fiber::detail
