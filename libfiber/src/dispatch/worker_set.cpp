// WorkerSet's membership (worker_set.hpp): obtaining workers, lending them to pools, parking
// them, taking back one that answered after it was taken for lost, and the end.
#include "dispatch/worker_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "fiber/errors.hpp"
#include "id_list.hpp"
#include "log.hpp"
#include "mpi/error.hpp"
#include "run_identity.hpp"
#include "this_process.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {
namespace {

// Lanes are on unless FIBER_LANES is 0 (docs/design.md, "The lane"); a value other than 0 or 1
// is said once and leaves them on.
bool lanes_wanted() {
  const char* value = std::getenv("FIBER_LANES");
  if (!value || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  log::warn("FIBER_LANES={} is neither 0 nor 1; lanes stay on", value);
  return true;
}

// Why no worker starts: `node` may be lost, as `why` says.
SpawnError node_may_be_lost(const std::string& node, const std::string& why) {
  return SpawnError(
      fmt::format("fiber: no worker started: {} may be lost ({}), and under Open MPI 4.1 a spawn "
                  "after a node's loss ends the whole job; the pools go on with the workers they "
                  "have",
                  node, why));
}

}  // namespace

WorkerSet::WorkerSet(WorkerSpawner spawner)
    : spawner_(std::move(spawner)), master_host_(this_process().host), lanes_(lanes_wanted()) {}

void WorkerSet::make_available(int count, const WorkerShape& shape) {
  // Parked workers before a spawn: those of the shape, then those lending their slots to another
  // shape's parked ones, then parked ones of a narrower shape lending theirs to this one.
  if (parked_serving(shape) < count) take_back_lent_slots(shape, count - parked_serving(shape));
  if (parked_serving(shape) < count) lend_slots_to(shape, count - parked_serving(shape));
  int missing = count - parked_serving(shape);
  if (missing <= 0) return;
  // A spawn after a node's loss ends the whole job (docs/platform.md, "A lost node forbids
  // spawns"): none while a node may be lost, and the other nodes are asked first.
  if (auto node = node_in_doubt()) {
    throw node_may_be_lost(*node, "a worker there was lost and none there has answered since");
  }
  if (auto node = ask_other_nodes()) {
    throw node_may_be_lost(*node, "none of its workers answered when asked before this spawn");
  }
  int live = 1;  // slots taken: the master's, and each live worker's
  for (const auto& worker : workers_) live += slots_held(*worker);
  // Without slots for all, as many as fit (then the next join says why no more can start).
  auto free = WorkerSpawner::free_slots(live);
  if (free && *free >= slots_of(shape)) missing = std::min(missing, *free / slots_of(shape));
  for (auto& spawned : spawner_.spawn(static_cast<int>(workers_.size()), missing, live, shape)) {
    spawned.worker->spawned_as = shape;
    spawned.worker->shape = shape;
    int id = adopt(std::move(spawned));
    workers_[id]->channel.send(Welcome{id, run_identity(), "", "", 0, 0});
  }
}

std::optional<Placement> WorkerSet::place_on_its_node(const Worker& worker,
                                                      const WorkerShape& shape,
                                                      std::string& missing) const {
  std::vector<const Placement*> taken;  // by the workers that pools hold on its node
  for (const auto& other : workers_) {
    if (other.get() != &worker && !other->dead && !other->parked &&
        other->info.host == worker.info.host) {
      taken.push_back(&other->placement);
    }
  }
  return place(shape, worker.node, taken, missing);
}

std::optional<std::string> WorkerSet::node_in_doubt() {
  // MPI says nothing of a node's daemon: a worker heard after the loss shows the node alive.
  for (auto at = node_in_doubt_since_.begin(); at != node_in_doubt_since_.end();) {
    const auto& [host, since] = *at;
    bool heard = std::any_of(workers_.begin(), workers_.end(), [&](const auto& worker) {
      return !worker->dead && worker->info.host == host && worker->last_heard > since;
    });
    if (!heard) return host;
    at = node_in_doubt_since_.erase(at);
  }
  return std::nullopt;
}

int WorkerSet::join(const std::shared_ptr<PoolHandle>& pool) {
  const WorkerShape& shape = pool->options.shape;
  make_available(1, shape);
  // The latest parked worker of the pool's shape whose node has what the shape needs free.
  std::set<std::string> missing;
  std::optional<Placement> placement;
  auto chosen = parked_.rbegin();
  for (; chosen != parked_.rend(); ++chosen) {
    const Worker& candidate = *workers_[*chosen];
    if (candidate.shape != shape || candidate.lending_to) continue;
    if (shape == WorkerShape{}) {  // takes nothing of its node: no need to look at the others
      placement = Placement{};
      break;
    }
    std::string why;
    placement = place_on_its_node(candidate, shape, why);
    if (placement) break;
    missing.insert(why);
  }
  if (!placement) {
    throw SpawnError(fmt::format(
        "fiber: no worker of {} can start: {}; ask for fewer workers or less per worker",
        describe(shape), fmt::join(missing, "; ")));
  }
  int id = *chosen;
  parked_.erase(std::next(chosen).base());
  Worker& worker = *workers_[id];
  worker.placement = std::move(*placement);
  if (shape != WorkerShape{}) {  // (a worker of the default shape takes nothing)
    const Placement& given = worker.placement;
    worker.channel.send(Welcome{id, run_identity(), format_id_list(given.cpus),
                                format_id_list(given.gpus), static_cast<std::uint32_t>(shape.cores),
                                shape.memory_bytes});
    sending_.push(id);
  }
  worker.pool = pool;
  worker.parked = false;
  worker.idle_since = Clock::now();  // (a spawn may have taken a while)
  pool->workers.push_back(id);
  ++pool->workers_on_host[worker.info.host];
  pool->idle.push(id);
  {
    std::lock_guard lock(pool->info_mutex);
    pool->worker_infos.push_back(worker.info);
  }
  parked_count_.store(static_cast<int>(parked_.size()));
  return id;
}

int WorkerSet::adopt(WorkerSpawner::Spawned spawned) {
  int id = static_cast<int>(workers_.size());
  spawned.worker->info.id = id;
  spawned.worker->parked = true;
  workers_.push_back(std::move(spawned.worker));
  receives_.add(spawned.receive);
  parked_.push_back(id);
  count_.store(static_cast<int>(workers_.size()));
  parked_count_.store(static_cast<int>(parked_.size()));
  return id;
}

void WorkerSet::leave_pool(int id) {
  Worker& worker = *workers_[id];
  auto pool = std::move(worker.pool);
  if (!pool) return;
  std::erase(pool->workers, id);
  if (--pool->workers_on_host[worker.info.host] == 0) pool->workers_on_host.erase(worker.info.host);
  {
    std::lock_guard lock(pool->info_mutex);
    std::erase_if(pool->worker_infos, [&](const WorkerInfo& w) { return w.id == id; });
  }
  worker.pool = nullptr;
  park_if_drained(id);
}

void WorkerSet::park_if_drained(int id) {
  Worker& worker = *workers_[id];
  if (worker.pool || worker.dead || worker.parked || !worker.in_flight.empty()) return;
  close_lane(worker);  // (idle: its task process ends with the park)
  worker.lane_refused = false;
  worker.parked = true;
  ++worker.parks;
  worker.standby_ready = false;
  send(id, MessageKind::park);
  parked_.push_back(id);
  parked_count_.store(static_cast<int>(parked_.size()));
}

void WorkerSet::unpark(int id) {
  Worker& worker = *workers_[id];
  if (!worker.parked) return;
  worker.parked = false;  // (revived, it parks again)
  std::erase(parked_, id);
  parked_count_.store(static_cast<int>(parked_.size()));
}

void WorkerSet::revive(int id) {
  Worker& worker = *workers_[id];
  worker.dead = false;
  worker.stale_chunks_below = next_chunk_id_;
  send(id, MessageKind::drop);  // its chunks were re-sent to others
  log::warn("{} answered again after being taken for lost; it waits parked", where(worker.info));
  park_if_drained(id);
}

void WorkerSet::forget() {
  for (auto& worker : workers_) worker->group->comm.release();
  workers_.clear();
  busy_ = 0;
  silent_order_.clear();
  count_.store(0);
}

void WorkerSet::shut_down() {
  // A spawn's intercommunicator is disconnected as a whole, so only if every member can take
  // part: one lost member (dead, or its connection broken) and the group is released instead, and
  // its other members are told to leave without disconnecting (docs/platform.md, "Disconnecting
  // from a dead process hangs").
  std::set<const SpawnGroup*> incomplete;
  for (const auto& worker : workers_) {
    if (worker->dead || worker->channel.failure()) incomplete.insert(worker->group.get());
  }
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    // A worker taken for lost is never waited for: its process may be gone.
    mpi::check(receives_.cancel(id, /*wait=*/!worker.dead), "cancelling a receive");
    // Also to a worker taken for lost that may only have been starved: alive, it ends (MPI_Finalize
    // would wait for it); dead, the message is never waited for.
    worker.channel.send(Shutdown{!incomplete.contains(worker.group.get())});
  }
  for (auto& worker : workers_) {
    if (!worker->dead) worker->channel.wait_sends();
    if (worker->channel.failure()) incomplete.insert(worker->group.get());
  }
  std::set<const SpawnGroup*> done;
  for (auto& worker : workers_) {
    SpawnGroup& group = *worker->group;
    if (!done.insert(&group).second) continue;
    if (incomplete.contains(&group)) {
      group.comm.release();  // disconnecting from a dead process would hang
    } else {
      group.comm.disconnect();
    }
  }
  workers_.clear();
  busy_ = 0;
  silent_order_.clear();
  count_.store(0);
}

}  // namespace fiber::detail
