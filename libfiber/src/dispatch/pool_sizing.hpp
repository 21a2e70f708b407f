// How many workers each pool holds: growing it (a parked worker first, else a new one, with the
// pool's initializer and broadcasts replayed on it), shrinking it (idle workers first), replacing
// a lost worker, and autoscaling between min_workers and max_workers on the backlog.
#pragma once

#include <memory>
#include <vector>

#include "dispatch/scheduler.hpp"
#include "dispatch/worker_set.hpp"

namespace fiber::detail {

class PoolSizing {
 public:
  PoolSizing(WorkerSet& workers, Scheduler& scheduler, ProgressDriver& driver)
      : workers_(workers), scheduler_(scheduler), driver_(driver) {}

  using Jobs = std::vector<std::shared_ptr<Job>>;

  // Adds `count` workers to the pool; their initializer jobs. fiber::SpawnError if one cannot be
  // started (those added before it stay).
  Jobs grow(const std::shared_ptr<PoolHandle>& pool, int count);
  // Takes `count` workers from the pool, the least busy first: their work finishes, then they
  // park.
  void shrink(PoolHandle& pool, int count);
  // Restores the pool's size after it lost a worker (if it is still short); says so if it cannot.
  void replace_lost(const std::shared_ptr<PoolHandle>& pool);
  // Pools left short by a replacement that could not be started take back parked workers of
  // their shape (a worker taken for lost that answered again is one), without spawning.
  void take_back_parked(const std::vector<std::shared_ptr<PoolHandle>>& pools);
  // Grows autoscaled pools with a backlog, up to max_workers (lowered for good if spawning
  // fails), and shrinks them to min_workers by the workers idle for scale_down_after.
  void autoscale(const std::vector<std::shared_ptr<PoolHandle>>& pools, Clock::time_point now);

 private:
  // Parks the pool's workers idle for longer than scale_down_after, down to min_workers; looks only
  // at the front of its idle list.
  void park_idle(PoolHandle& pool, Clock::time_point now);
  // One more worker for the pool; its initializer job, if any.
  // A worker joins the pool (spawned if none is parked) and is sent its initializer and
  // broadcasts; its silence counts from then, not from before a spawn that may have taken long.
  std::shared_ptr<Job> add_worker(const std::shared_ptr<PoolHandle>& pool);

  WorkerSet& workers_;
  Scheduler& scheduler_;
  ProgressDriver& driver_;
};

}  // namespace fiber::detail
