// Workers in the order they were listed, each listed at most once: whom the dispatcher looks at
// next (a pool's idle workers, those that just answered, those with sends in flight), so that a
// step costs what changed rather than a scan of every worker. An entry is not taken off when its
// worker changes (takes work, leaves the pool, is lost): whoever takes it checks that it still
// qualifies.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

namespace fiber::detail {

class WorkerQueue {
 public:
  // Lists worker `id` at the back, unless it is listed already.
  void push(int id) {
    auto index = static_cast<std::size_t>(id);
    if (index >= listed_.size()) listed_.resize(index + 1, false);
    if (listed_[index]) return;
    listed_[index] = true;
    ids_.push_back(id);
  }
  // The front worker, taken off the list (the list must not be empty).
  int pop() {
    int id = ids_.front();
    ids_.pop_front();
    listed_[static_cast<std::size_t>(id)] = false;
    return id;
  }
  bool empty() const { return ids_.empty(); }
  std::size_t size() const { return ids_.size(); }

 private:
  std::deque<int> ids_;
  std::vector<bool> listed_;  // index = worker id
};

}  // namespace fiber::detail
