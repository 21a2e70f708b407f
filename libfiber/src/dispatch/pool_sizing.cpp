#include "dispatch/pool_sizing.hpp"

#include <algorithm>

#include "fiber/errors.hpp"
#include "log.hpp"

namespace fiber::detail {

PoolSizing::Jobs PoolSizing::grow(const std::shared_ptr<PoolHandle>& pool, int count) {
  Jobs initializers;
  pool->target = static_cast<int>(pool->workers.size()) + count;
  // Those missing, in one spawn (as many as there are slots).
  workers_.make_available(count, pool->options.shape);
  while (static_cast<int>(pool->workers.size()) < pool->target) {
    if (auto job = add_worker(pool)) initializers.push_back(std::move(job));
  }
  return initializers;
}

std::shared_ptr<Job> PoolSizing::add_worker(const std::shared_ptr<PoolHandle>& pool) {
  int id = workers_.join(pool);
  const auto now = Clock::now();
  std::shared_ptr<Job> initializer;
  // (A worker whose standby ran the same initializer ahead is told to keep it: nothing to wait
  // for.)
  const bool kept = workers_.keeps_initializer(id, *pool);
  if (pool->options.initializer && !kept) {
    const std::uint32_t flags = kRunInitializer | (pool->ahead_initializer ? kRunAhead : 0);
    initializer = scheduler_.send_call(id, pool, *pool->options.initializer, flags, &driver_, now);
  }
  for (const auto& call : pool->broadcasts) {
    workers_.send_chunk(id, pool, broadcast_job(*pool, call, &driver_), 0, 1, kRunBroadcast,
                        nullptr, now);
  }
  workers_.open_lane_early(id, *pool);
  return initializer;
}

void PoolSizing::shrink(PoolHandle& pool, int count) {
  for (; count > 0 && !pool.workers.empty(); --count) {
    auto least_busy = std::min_element(pool.workers.begin(), pool.workers.end(), [&](int a, int b) {
      return workers_[a].in_flight.size() < workers_[b].in_flight.size();
    });
    workers_.leave_pool(*least_busy);
  }
  pool.target = static_cast<int>(pool.workers.size());
}

namespace {

bool short_of_workers(const PoolHandle& pool) {
  return !pool.terminated && !pool.released && static_cast<int>(pool.workers.size()) < pool.target;
}

}  // namespace

void PoolSizing::replace_lost(const std::shared_ptr<PoolHandle>& pool) {
  if (!short_of_workers(*pool)) return;
  try {
    add_worker(pool);
  } catch (const Error& error) {
    log::warn("could not replace a lost worker: {}", error.what());
  }
}

void PoolSizing::take_back_parked(const std::vector<std::shared_ptr<PoolHandle>>& pools) {
  for (const auto& pool : pools) {
    while (short_of_workers(*pool) && workers_.parked_serving(pool->options.shape) > 0) {
      try {
        add_worker(pool);
      } catch (const Error& error) {  // e.g. parked, but its node lacks what the shape needs
        log::warn("could not take back a parked worker: {}", error.what());
        break;
      }
      log::info("a pool short of a worker it could not replace took a parked one back");
    }
  }
}

void PoolSizing::park_idle(PoolHandle& pool, Clock::time_point now) {
  // The idle list is in the order the workers became idle: the longest idle are at its front.
  for (std::size_t listed = pool.idle.size();
       listed > 0 && static_cast<int>(pool.workers.size()) > pool.options.min_workers; --listed) {
    int id = pool.idle.pop();
    const Worker& worker = workers_[id];
    // Not idle any more: listed again once it is.
    if (worker.pool.get() != &pool || worker.dead || !worker.in_flight.empty()) continue;
    if (now - worker.idle_since <= pool.options.scale_down_after) {
      pool.idle.push(id);  // (behind the others: one idle again after a call is out of order)
      break;
    }
    workers_.leave_pool(id);
    pool.target = static_cast<int>(pool.workers.size());
  }
}

void PoolSizing::autoscale(const std::vector<std::shared_ptr<PoolHandle>>& pools,
                           Clock::time_point now) {
  for (const auto& pool : pools) {
    if (pool->autoscale_ceiling <= 0 || pool->terminated) continue;
    int size = static_cast<int>(pool->workers.size());
    std::size_t backlog = 0;
    for (const auto& scheduled : pool->queue) backlog += scheduled->backlog();
    if (backlog > 0 && size < pool->autoscale_ceiling) {
      int wanted = std::min<int>(pool->autoscale_ceiling, size + static_cast<int>(backlog));
      try {
        grow(pool, wanted - size);
      } catch (const SpawnError& error) {
        pool->autoscale_ceiling = static_cast<int>(pool->workers.size());
        pool->target = pool->autoscale_ceiling;
        log::warn("autoscaling stops at {} workers: {}", pool->autoscale_ceiling, error.what());
      }
      continue;
    }
    if (backlog == 0) park_idle(*pool, now);
  }
}

}  // namespace fiber::detail
