// WorkerSet's failure detection (worker_set.hpp): workers whose connection failed, busy workers
// silent for too long (silence_watch.hpp, silence_queue.hpp), and what a lost worker held.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "dispatch/worker_set.hpp"
#include "log.hpp"

namespace fiber::detail {

void WorkerSet::watch_silence(int id) {
  const Worker& worker = *workers_[id];
  // Every busy worker sends heartbeats (with Isolation::none from a thread: busy_heartbeat.hpp).
  if (worker.dead || worker.in_flight.empty()) {
    silent_order_.unwatch(id);
    return;
  }
  silent_order_.watch(id, worker.in_flight.front().pool->options.worker_timeout, worker.last_heard);
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
  give_back_slots(id);  // its lenders are parked workers of their own shape again
  // Its node may be lost with it: no spawn until a worker there is heard (make_available).
  if (worker.info.host != master_host_) node_in_doubt_since_[worker.info.host] = Clock::now();
  return chunks;
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

}  // namespace fiber::detail
