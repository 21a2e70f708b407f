// The busy workers in the order their silence runs out: grouped by their
// pool's worker_timeout, each group ordered by when the worker was last heard from. The longest
// silent worker of each group is at its front, so that finding the silent ones costs a look per
// group and per silent worker rather than a scan of every worker.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "fiber/detail/job.hpp"

namespace fiber::detail {

class SilenceQueue {
 public:
  // How much silence a pool with this worker_timeout allows now.
  using Allowed = std::function<Clock::duration(Clock::duration worker_timeout)>;

  // Watches worker `id`, last heard from at `heard`, of a pool with `worker_timeout` (in place of
  // what was watched of it before).
  void watch(int id, Clock::duration worker_timeout, Clock::time_point heard);
  void unwatch(int id);
  std::size_t size() const { return order_.size(); }
  void clear();

  // A watched worker silent at `now` for longer than its group allows, the longest silent of its
  // group; nothing if none is (it stays watched).
  std::optional<int> silent(Clock::time_point now, const Allowed& allowed) const;

 private:
  struct Entry {
    Clock::duration worker_timeout;
    Clock::time_point heard;
    int id;
    auto operator<=>(const Entry&) const = default;
  };

  std::set<Entry> order_;
  std::vector<std::optional<Entry>> entries_;  // index = worker id
};

}  // namespace fiber::detail
