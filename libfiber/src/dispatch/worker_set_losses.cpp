// WorkerSet's failure detection (worker_set.hpp): workers whose connection failed, busy workers
// silent for too long (silence_watch.hpp, silence_queue.hpp), what a lost worker held, and the
// other nodes' answer before a spawn.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <ranges>
#include <utility>

#include "backoff.hpp"
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
  auto silent = std::exchange(unanswered_, {});
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
  unpark(id);          // (no pool may take it)
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

std::optional<std::string> WorkerSet::ask_other_nodes() {
  const auto asked = Clock::now();
  // Each node asked, and until when its answer is waited for.
  std::map<std::string, Clock::time_point> waited;
  int probed = 0;
  for (std::size_t id = 0; id < workers_.size(); ++id) {
    const Worker& worker = *workers_[id];
    if (worker.dead || worker.unreachable || worker.info.host == master_host_) continue;
    auto within = std::chrono::duration_cast<Clock::duration>(kNodeAnswerTimeout);
    if (!worker.in_flight.empty()) {
      within = std::max(within, std::chrono::duration_cast<Clock::duration>(
                                    worker.in_flight.front().pool->options.worker_timeout));
    }
    auto [node, added] = waited.try_emplace(worker.info.host, asked + within);
    if (!added) node->second = std::max(node->second, asked + within);
    send(static_cast<int>(id), MessageKind::probe);
    ++probed;
  }
  if (waited.empty()) return std::nullopt;
  const std::size_t nodes = waited.size();
  auto heard_since_asked = [&](const std::string& host) {
    return std::any_of(workers_.begin(), workers_.end(), [&](const auto& worker) {
      return !worker->dead && worker->info.host == host && worker->last_heard >= asked;
    });
  };
  // Every worker there failed to take the question (MPI said so): none can answer.
  auto unreachable = [&](const std::string& host) {
    return std::none_of(workers_.begin(), workers_.end(), [&](const auto& worker) {
      return !worker->dead && worker->info.host == host && !worker->channel.failure();
    });
  };
  auto hold = [this](int id, Message& message) {
    held_messages_.emplace_back(id, std::move(message));
  };
  std::exception_ptr failure;
  Backoff backoff(kNodeAnswerPoll, kNodeAnswerPoll);
  for (;;) {
    progress_sends();
    const auto now = Clock::now();
    if (take_arrived(now, hold, failure) > 0) backoff.activity();
    std::erase_if(waited, [&](const auto& node) { return heard_since_asked(node.first); });
    if (std::all_of(waited.begin(), waited.end(), [&](const auto& node) {
          return now > node.second || unreachable(node.first);
        })) {
      break;  // (also once every node answered)
    }
    backoff.pause();
  }
  if (failure) std::rethrow_exception(failure);
  log::debug(
      "asked {} workers on {} other nodes whether they live before a spawn: {} silent, "
      "{:.2f} ms",
      probed, nodes, waited.size(),
      std::chrono::duration<double, std::milli>(Clock::now() - asked).count());
  for (const auto& host : std::views::keys(waited)) {
    node_in_doubt_since_[host] = asked;
    for (std::size_t id = 0; id < workers_.size(); ++id) {
      Worker& worker = *workers_[id];
      if (worker.dead || worker.info.host != host || !worker.in_flight.empty()) continue;
      // (A busy one's silence is watched already.)
      worker.dead = true;  // (lose() finishes the job; no pool gives it work meanwhile)
      unpark(static_cast<int>(id));
      unanswered_.emplace_back(
          id, fmt::format("{} did not answer before a spawn (its node lost?)", where(worker.info)));
    }
  }
  if (waited.empty()) return std::nullopt;
  return waited.begin()->first;
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
