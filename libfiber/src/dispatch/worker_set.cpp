#include "dispatch/worker_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "dispatch/broadcast_routes.hpp"
#include "fiber/errors.hpp"
#include "log.hpp"
#include "mpi/error.hpp"
#include "this_process.hpp"
#include "trace/hop_trace.hpp"
#include "wire/entry_list.hpp"
#include "wire/messages.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {
namespace {

// While every worker with chunks in flight has lent its task process to the master, nothing the
// master waits for comes through MPI but a worker's rare word (a death, a heartbeat, a hello):
// poll() looks at MPI this often then, not every round: an MPI_Testsome that finds nothing gives
// the core away (yield_when_idle). Empty tasks through a lane took 0.80-0.87 us each so, against
// 0.90-1.17 us with a look every round (benchmarks/task_hop, alternated 3 times).
constexpr auto kLanedMpiLook = std::chrono::microseconds(100);

// A chunk's header: its pool says whether it runs in the task process, the default timeout and
// how often a worker running it says it lives.
RunHeader run_header(const PoolHandle& pool, const JobState& job, std::uint64_t chunk_id,
                     std::uint32_t name_size, std::uint32_t count, std::uint32_t flags) {
  bool isolated = pool.options.isolation == Isolation::process;
  auto timeout = job.timeout().count() > 0 ? job.timeout() : pool.options.task_timeout;
  return {chunk_id,
          name_size,
          count,
          flags | (isolated ? kRunIsolated : 0u),
          static_cast<std::uint32_t>(timeout.count()),
          static_cast<std::uint32_t>(pool.options.maxtasksperchild.value_or(0)),
          static_cast<std::uint32_t>(std::max<std::chrono::milliseconds::rep>(
              1, pool.options.worker_timeout.count() / kHeartbeatsPerWorkerTimeout))};
}

// Lanes are on unless FIBER_LANES is 0 (docs/design.md, "The lane"); a value other than 0 or 1
// is said once and leaves them on.
bool lanes_wanted() {
  const char* value = std::getenv("FIBER_LANES");
  if (!value || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  log::warn("FIBER_LANES={} is neither 0 nor 1; lanes stay on", value);
  return true;
}

}  // namespace

WorkerSet::WorkerSet(WorkerSpawner spawner)
    : spawner_(std::move(spawner)), master_host_(this_process().host), lanes_(lanes_wanted()) {}

void WorkerSet::make_available(int count) {
  int missing = count - static_cast<int>(parked_.size());
  if (missing <= 0) return;
  int live = 1 + static_cast<int>(std::count_if(workers_.begin(), workers_.end(),
                                                [](const auto& w) { return !w->dead; }));
  // Without slots for all, as many as fit (then the next join says why no more can start).
  auto free = WorkerSpawner::free_slots(live);
  if (free && *free > 0) missing = std::min(missing, *free);
  for (auto& spawned : spawner_.spawn(static_cast<int>(workers_.size()), missing, live)) {
    adopt(std::move(spawned));
  }
}

int WorkerSet::join(const std::shared_ptr<PoolHandle>& pool) {
  make_available(1);
  int id = parked_.back();
  parked_.pop_back();
  Worker& worker = *workers_[id];
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
  send(id, MessageKind::park);
  parked_.push_back(id);
  parked_count_.store(static_cast<int>(parked_.size()));
}

void WorkerSet::send(int id, MessageKind kind) {
  Worker& worker = *workers_[id];
  if (kind == MessageKind::drop && worker.lane) {
    // The worker kills the lane's task process; its chunks end cancelled here.
    worker.lane->cancel_all();
    close_lane(worker);
  }
  worker.channel.send(kind);
  // Both end the worker's lent sleep (after this ring): it polls MPI again.
  if (kind == MessageKind::drop || kind == MessageKind::park) worker.channel.ring_after_sends({});
  sending_.push(id);
}

void WorkerSet::send(int id, Batch& batch) {
  if (batch.empty()) return;
  batch.send(workers_[id]->channel);
  sending_.push(id);
}

void WorkerSet::send_chunk(int id, const std::shared_ptr<PoolHandle>& pool,
                           const std::shared_ptr<ScheduledJob>& scheduled, std::size_t first,
                           std::size_t count, std::uint32_t flags, Batch* batch,
                           Clock::time_point now) {
  Worker& worker = *workers_[id];
  std::uint64_t chunk_id = next_chunk_id_++;
  hop_trace::mark(hop_trace::Point::master_sent, chunk_id);
  send_entry(worker, MessageKind::run, {}, *pool, *scheduled, first, count, flags, chunk_id, batch);
  add_in_flight(worker, {chunk_id, scheduled, pool, first, count}, now);
}

void WorkerSet::send_entry(Worker& worker, MessageKind kind, std::span<const char> prefix,
                           const PoolHandle& pool, const ScheduledJob& scheduled, std::size_t first,
                           std::size_t count, std::uint32_t flags, std::uint64_t chunk_id,
                           Batch* batch) {
  const JobState& job = scheduled.state();
  RunHeader header = run_header(pool, job, chunk_id, static_cast<std::uint32_t>(job.task().size()),
                                static_cast<std::uint32_t>(count), flags);
  auto offsets = job.offsets(first, count);
  auto& relative = scratch_offsets_;
  relative.resize(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) relative[i] = offsets[i] - offsets[0];
  RunEntryParts entry{header, job.task(), relative, job.arguments(first, count)};
  if (kind == MessageKind::run && !(flags & (kRunInitializer | kRunRelayFallback)) &&
      lane_fits(worker, pool)) {
    send_to_lane(worker, pool, entry);
    return;
  }
  if (kind == MessageKind::run && batch && entry.items.size() <= kBatchedEntryBytes) {
    batch->add(entry);  // joins the worker's batch
    return;
  }
  // Alone: a run message is a list of one entry, a relay message has its prefix. The arguments
  // are sent in place (the job stays alive).
  Bytes list_prefix;
  if (kind == MessageKind::run) prefix = list_prefix = entry_size_prefix(entry.size());
  worker.channel.send(kind, {prefix, entry.head(), entry.items}, scheduled.job);
  sending_.push(worker.info.id);
}

void WorkerSet::add_in_flight(Worker& worker, InFlight chunk, Clock::time_point now) {
  // A worker that had nothing to do had no reason to talk: its silence starts now.
  if (worker.in_flight.empty()) worker.last_heard = now;
  if (!worker.busy) {
    worker.busy = true;
    ++busy_;
  }
  worker.in_flight.push_back(std::move(chunk));
  watch_silence(worker.info.id);
}

void WorkerSet::send_broadcast(const std::shared_ptr<PoolHandle>& pool,
                               const std::vector<std::shared_ptr<ScheduledJob>>& jobs,
                               Clock::time_point now) {
  std::vector<RouteCandidate> candidates;
  std::vector<int> laned;  // written into their lanes by the master, never relayed
  for (int id : pool->workers) {
    const Worker& worker = *workers_[id];
    if (lane_fits(worker, *pool)) {
      laned.push_back(id);
    } else {
      candidates.push_back({id, worker.group.get(), worker.info.host});
    }
  }
  std::unordered_map<int, std::size_t> position;  // worker id -> its index in pool->workers
  for (std::size_t i = 0; i < pool->workers.size(); ++i) position[pool->workers[i]] = i;
  auto job_of = [&](int id) { return jobs[position.at(id)]; };
  std::size_t body_bytes = jobs.empty() ? 0 : jobs.front()->state().arguments(0, 1).size();
  auto routes = route_broadcast(candidates, body_bytes);
  std::size_t relays = 0, siblings = 0;
  for (const auto& route : routes.relayed) {
    for (const RelayRoute* relay : route_relays(route)) {
      ++relays;
      siblings += relay->siblings.size();
    }
  }
  log::debug(
      "broadcast of '{}' ({} bytes): {} into lanes, {} direct, {} relay(s) for {} sibling(s), {} "
      "sent the body by the master",
      jobs.empty() ? std::string() : jobs.front()->state().task(), body_bytes, laned.size(),
      routes.direct.size(), relays, siblings, routes.relayed.size());
  for (int id : laned) send_chunk(id, pool, job_of(id), 0, 1, kRunBroadcast, nullptr, now);
  for (int id : routes.direct) send_chunk(id, pool, job_of(id), 0, 1, kRunBroadcast, nullptr, now);
  for (const auto& route : routes.relayed) {
    Worker& relay = *workers_[route.relay];
    std::uint64_t relay_chunk = next_chunk_id_++;
    auto hops = route_hops(route);
    std::vector<RelayHop> relay_hops;
    for (const auto& hop : hops) {
      relay_hops.push_back({workers_[hop.worker]->channel.peer(), hop.descendants});
    }
    Bytes prefix = Relay::encode_route(relay_hops);
    send_entry(relay, MessageKind::relay, prefix, *pool, *job_of(route.relay), 0, 1, kRunBroadcast,
               relay_chunk, nullptr);
    add_in_flight(relay, {relay_chunk, job_of(route.relay), pool, 0, 1}, now);
    // Every worker the route reaches waits with a stand-in for the first relay's copy...
    std::unordered_map<int, std::uint64_t> stand_in_of;
    for (int member : route_members(route)) {
      Worker& worker = *workers_[member];
      std::uint64_t chunk_id = next_chunk_id_++;
      send_stand_in(worker, *pool, *job_of(member), chunk_id, relay_chunk);
      add_in_flight(worker, {chunk_id, job_of(member), pool, 0, 1}, now);
      stand_in_of[member] = chunk_id;
    }
    // ... which the master sends it itself if any relay on its way is lost.
    for (const RelayRoute* on_the_way : route_relays(route)) {
      auto& relayed = relayed_by_[on_the_way->relay];
      // Stand-ins answered since the last broadcast need no fallback any more.
      std::erase_if(relayed, [&](const RelayedChunk& chunk) { return !holds(chunk); });
      for (int member : route_members(*on_the_way)) {
        relayed.push_back({member, stand_in_of.at(member)});
      }
    }
  }
}

void WorkerSet::send_stand_in(Worker& worker, const PoolHandle& pool, const ScheduledJob& job,
                              std::uint64_t chunk_id, std::uint64_t relay_chunk) {
  RunHeader header = run_header(pool, job.state(), chunk_id, 0, 1, kRunBroadcast | kRunFromRelay);
  Bytes stand_in = stand_in_entry(header, relay_chunk);
  worker.channel.send(MessageKind::run, {entry_size_prefix(stand_in.size()), stand_in});
  sending_.push(worker.info.id);
}

bool WorkerSet::holds(const RelayedChunk& chunk) const {
  const Worker& worker = *workers_[chunk.sibling];
  return !worker.dead &&
         std::any_of(worker.in_flight.begin(), worker.in_flight.end(),
                     [&](const InFlight& c) { return c.chunk_id == chunk.chunk_id; });
}

void WorkerSet::fall_back_from_relay(int relay) {
  auto relayed = relayed_by_.find(relay);
  if (relayed == relayed_by_.end()) return;
  int resent = 0;
  for (const RelayedChunk& chunk : relayed->second) {
    if (!holds(chunk)) continue;
    Worker& worker = *workers_[chunk.sibling];
    const InFlight& in_flight =
        *std::find_if(worker.in_flight.begin(), worker.in_flight.end(),
                      [&](const InFlight& c) { return c.chunk_id == chunk.chunk_id; });
    send_entry(worker, MessageKind::run, {}, *in_flight.pool, *in_flight.job, in_flight.first,
               in_flight.count, kRunBroadcast | kRunRelayFallback, chunk.chunk_id, nullptr);
    ++resent;
  }
  relayed_by_.erase(relayed);
  if (resent > 0) {
    log::info("a broadcast relay was lost: {} of the workers it relays to get it from the master",
              resent);
  }
}

bool WorkerSet::mpi_can_wait(int lent_busy, Clock::time_point now) const {
  return busy_ > 0 && lent_busy == busy_ && sending_.empty() &&
         now - last_mpi_look_ < kLanedMpiLook;
}

bool WorkerSet::poll(Clock::time_point now, const std::function<void(int, Message&)>& on_message) {
  int lent_busy = 0;
  bool lanes_moved = progress_lanes(now, lent_busy);
  if (mpi_can_wait(lent_busy, now)) {
    deliver_lane_results(on_message);
    return lanes_moved;
  }
  last_mpi_look_ = now;
  int completed = 0;
  int rc = receives_.test_some(completed);
  // A receive that completed in error (its worker died mid-message, its connection broke) is
  // that worker's failure alone; the statuses say which (and only with MPI_ERR_IN_STATUS).
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    throw Error("fiber: MPI_Testsome failed: " + mpi::error_text(rc));
  }
  if (completed == MPI_UNDEFINED) {
    deliver_lane_results(on_message);
    return lanes_moved;
  }
  // Every completed receive is taken (and posted again) even if one of them throws: a request
  // left completed would silence its worker for good.
  std::exception_ptr failure;
  for (int k = 0; k < completed; ++k) {
    int id = receives_.indices()[k];
    const MPI_Status& status = receives_.statuses()[k];
    if (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS) {
      *receives_.at(id) = MPI_REQUEST_NULL;
      workers_[id]->channel.fail("a receive from it failed: " + mpi::error_text(status.MPI_ERROR));
      continue;
    }
    try {
      receive(id, status, on_message, now);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    heard_from(id);
  }
  try {
    deliver_lane_results(on_message);
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  progress_sends();
  if (failure) std::rethrow_exception(failure);
  return completed > 0 || lanes_moved;  // none came: a quiet round, after which one may back off
}

void WorkerSet::receive(int id, const MPI_Status& status,
                        const std::function<void(int, Message&)>& on_message,
                        Clock::time_point now) {
  Worker& worker = *workers_[id];
  MPI_Request* request = receives_.at(id);
  try {
    auto message = worker.channel.on_received(status, request);
    if (!message) return;
    worker.channel.post_receive(request);
    if (worker.unreachable) return;  // lost for good (its channel failed): never revived
    worker.last_heard = now;
    if (!worker.dead &&
        (message->kind == MessageKind::lane || message->kind == MessageKind::lane_lost)) {
      return on_lane_message(worker, *message, now);
    }
    on_message(id, *message);
  } catch (const ProtocolError& error) {
    *request = MPI_REQUEST_NULL;
    worker.channel.fail(fmt::format("it sent a message fiber cannot read ({})", error.what()));
  }
}

void WorkerSet::heard_from(int id) {
  Worker& worker = *workers_[id];
  watch_silence(id);
  bool holds_nothing = worker.in_flight.empty();
  if (worker.busy && holds_nothing) {
    worker.busy = false;
    --busy_;
  }
  if (!worker.pool || worker.dead) return;
  if (holds_nothing) worker.pool->idle.push(id);
  worker.pool->answered.push(id);
}

void WorkerSet::watch_silence(int id) {
  const Worker& worker = *workers_[id];
  // Every busy worker sends heartbeats (with Isolation::none from a thread: busy_heartbeat.hpp).
  if (worker.dead || worker.in_flight.empty()) {
    silent_order_.unwatch(id);
    return;
  }
  silent_order_.watch(id, worker.in_flight.front().pool->options.worker_timeout, worker.last_heard);
}

void WorkerSet::progress_sends() {
  for (std::size_t listed = sending_.size(); listed > 0; --listed) {
    int id = sending_.pop();
    Worker& worker = *workers_[id];
    if (!worker.dead && !worker.channel.progress_sends()) sending_.push(id);
  }
}

std::vector<int> WorkerSet::newly_unreachable() {
  // Failures are rare: the workers are looked through only when a channel failed since last time.
  std::vector<int> ids;
  std::uint64_t failures = Channel::failures_so_far();
  if (failures == failures_seen_) return ids;
  failures_seen_ = failures;
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    if (worker.unreachable || !worker.channel.failure()) continue;
    worker.unreachable = true;
    ids.push_back(static_cast<int>(id));
  }
  return ids;
}

std::vector<std::pair<int, std::string>> WorkerSet::newly_silent(Clock::time_point now) {
  std::vector<std::pair<int, std::string>> silent;
  auto gap = now - last_silence_check_;
  if (gap < kSilenceCheckPeriod) return silent;
  bool first_check = last_silence_check_ == Clock::time_point{};
  last_silence_check_ = now;
  if (!first_check && gap > kDispatcherStall) {  // (rare: every worker is looked at)
    for (std::size_t id = 0; id < workers_.size(); ++id) {
      Worker& worker = *workers_[id];
      worker.last_heard = std::min(now, worker.last_heard + gap);
      watch_silence(static_cast<int>(id));
    }
  }
  auto allowed = [&](Clock::duration worker_timeout) {
    return silence_.allowed(worker_timeout, now);
  };
  while (auto id = silent_order_.silent(now, allowed)) {
    Worker& worker = *workers_[*id];
    const auto worker_timeout = worker.in_flight.front().pool->options.worker_timeout;
    auto silence = now - worker.last_heard;
    silent.emplace_back(*id, fmt::format("{} stopped answering for {:.1f} s", where(worker.info),
                                         seconds(silence)));
    worker.dead = true;  // (lose() finishes the job; it is not looked at twice meanwhile)
    silent_order_.unwatch(*id);
    if (silence_.on_loss(now, allowed(worker_timeout))) {
      log::warn(
          "workers keep falling silent (an overloaded node?); a worker is now "
          "taken for lost after {:.0f} s of silence",
          seconds(worker_timeout * silence_.scale()));
    }
  }
  return silent;
}

std::deque<InFlight> WorkerSet::lose(int id) {
  Worker& worker = *workers_[id];
  // MPI reports nothing about a dead process (docs/platform.md, "MPI does not report a dead
  // process"): send it nothing more. Its connection stays ("Disconnecting from a dead process
  // hangs") and its receive stays posted: a worker that was only starved (an overloaded node)
  // answers again and is revived.
  worker.dead = true;
  close_lane(worker);  // (its task process dies with it)
  silent_order_.unwatch(id);
  if (worker.busy) {
    worker.busy = false;
    --busy_;
  }
  auto chunks = std::exchange(worker.in_flight, {});
  fall_back_from_relay(id);
  return chunks;
}

void WorkerSet::revive(int id) {
  Worker& worker = *workers_[id];
  worker.dead = false;
  worker.stale_chunks_below = next_chunk_id_;
  send(id, MessageKind::drop);  // its chunks were re-sent to others
  log::warn("{} answered again after being taken for lost; it waits parked", where(worker.info));
  park_if_drained(id);
}

std::vector<InFlight> WorkerSet::abandon_in_flight() {
  std::vector<InFlight> abandoned;
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    Worker& worker = *workers_[id];
    if (!worker.in_flight.empty() && !worker.dead) send(static_cast<int>(id), MessageKind::drop);
    for (auto& chunk : worker.in_flight) abandoned.push_back(std::move(chunk));
    worker.in_flight.clear();
    worker.busy = false;
    worker.stale_chunks_below = next_chunk_id_;
  }
  busy_ = 0;
  silent_order_.clear();
  return abandoned;
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

// --- lanes ---

bool WorkerSet::lane_fits(const Worker& worker, const PoolHandle& pool) const {
  if (worker.lane) return true;  // (also once lanes_ went off: the worker waits on its lane)
  return lanes_ && !worker.lane_refused && pool.options.isolation == Isolation::process &&
         !pool.options.maxtasksperchild && worker.info.host == master_host_;
}

void WorkerSet::send_to_lane(Worker& worker, const PoolHandle& pool, const RunEntryParts& entry) {
  const int id = worker.info.id;
  if (!worker.lane) {
    worker.lane =
        std::make_unique<Lane>(next_lane_id_++, [this, id](std::shared_ptr<Bytes> result) {
          lane_results_.emplace_back(id, std::move(result));
        });
    laned_.push_back(id);
    worker.channel.send(LaneOpen{worker.lane->id(), entry.header.heartbeat_ms});
    sending_.push(id);
    log::debug("{} is asked for a lane to its task process (pool of {} workers)",
               where(worker.info), pool.workers.size());
  }
  Bytes body;
  entry.append_to(body);
  if (entry.header.flags & kRunBroadcast) {  // for the worker to replay in later task processes
    worker.channel.send(Replay{worker.lane->id(), body});
    sending_.push(id);
  }
  worker.lane->send(body, Clock::now());
}

void WorkerSet::on_lane_message(Worker& worker, const Message& message, Clock::time_point now) {
  // A message of a lane closed since (dropped, parked) comes too late.
  if (message.kind == MessageKind::lane_lost) {
    auto lost = decode_message<LaneLost>(message.body);
    if (!worker.lane || worker.lane->id() != lost.lane) return;
    worker.channel.ring_after_sends({});  // the worker polls MPI again
    worker.lane->lost(lost.reason, now);
    close_lane(worker);
    return;
  }
  auto answer = decode_message<LaneAnswer>(message.body);
  if (!worker.lane || worker.lane->id() != answer.lane) return;
  if (answer.is_lent()) {
    try {
      worker.lane->attach(static_cast<pid_t>(worker.info.pid), answer.memory_fd, answer.doorbell_fd,
                          now);
      worker.channel.ring_after_sends(worker.lane->doorbell());
      return;
    } catch (const Error& error) {
      // A platform that keeps one process out of another's descriptors keeps every worker's:
      // no more lanes. The worker is told to take its task process back (drop: it kills it).
      log::warn(
          "the master cannot reach the task processes of its workers ({}); their tasks go "
          "through the workers",
          error.what());
      lanes_ = false;
      worker.channel.send(MessageKind::drop);
    }
  } else {
    log::info("{} could not lend its task process ({}); its tasks go through it",
              where(worker.info), answer.refusal);
    worker.lane_refused = true;
  }
  // The chunks that waited for the lane go through the worker after all.
  Bytes unsent = worker.lane->take_unsent();
  close_lane(worker);
  if (!unsent.empty()) worker.channel.send(MessageKind::run, {unsent});
  sending_.push(worker.info.id);
}

bool WorkerSet::progress_lanes(Clock::time_point now, int& lent_busy) {
  bool moved = false;
  for (int id : laned_) {
    Worker& worker = *workers_[id];
    Lane& lane = *worker.lane;
    if (lane.lent() && !lane.idle()) ++lent_busy;
    if (lane.idle() || !lane.lent()) continue;
    if (lane.progress(now)) {
      moved = true;
      worker.last_heard = now;  // its task process answered
      watch_silence(id);
    }
    if (auto overdue = lane.newly_overdue(now)) {
      worker.channel.send(LaneKill{lane.id(), overdue->chunk, overdue->item});
      sending_.push(id);
    }
  }
  return moved;
}

void WorkerSet::deliver_lane_results(const std::function<void(int, Message&)>& on_message) {
  if (lane_results_.empty()) return;
  auto results = std::exchange(lane_results_, {});
  std::exception_ptr failure;
  for (auto& [id, entry] : results) {
    Worker& worker = *workers_[id];
    if (worker.dead) continue;  // its chunks were re-sent when it was lost
    Message message{MessageKind::result, {}};
    append_entry(message.body, *entry);
    try {
      on_message(id, message);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    heard_from(id);
  }
  if (failure) std::rethrow_exception(failure);
}

void WorkerSet::close_lane(Worker& worker) {
  if (!worker.lane) return;
  worker.lane.reset();
  std::erase(laned_, worker.info.id);
}

}  // namespace fiber::detail
