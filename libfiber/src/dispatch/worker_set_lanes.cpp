// WorkerSet's lanes (worker_set.hpp, lane.hpp): the chunks of a worker on the master's host
// written into its task process's memory, the worker's answers about its lane, and the results
// read back.
#include <string>
#include <utility>

#include "dispatch/worker_set.hpp"
#include "fiber/errors.hpp"
#include "log.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {

bool WorkerSet::lane_fits(const Worker& worker, const PoolHandle& pool) const {
  if (worker.lane) return true;  // (also once lanes_ went off: the worker waits on its lane)
  return lanes_ && !worker.lane_refused && pool.options.isolation == Isolation::process &&
         !pool.options.maxtasksperchild && worker.info.host == master_host_;
}

void WorkerSet::ask_for_lane(Worker& worker, const PoolHandle& pool, std::uint32_t heartbeat_ms) {
  const int id = worker.info.id;
  worker.lane = std::make_unique<Lane>(next_lane_id_++, [this, id](std::shared_ptr<Bytes> result) {
    lane_results_.emplace_back(id, std::move(result));
  });
  laned_.push_back(id);
  worker.channel.send(LaneOpen{worker.lane->id(), heartbeat_ms});
  sending_.push(id);
  log::debug("{} is asked for a lane to its task process (pool of {} workers)", where(worker.info),
             pool.workers.size());
}

void WorkerSet::open_lane_early(int id, const PoolHandle& pool) {
  Worker& worker = *workers_[id];
  if (worker.lane || !lane_fits(worker, pool)) return;
  ask_for_lane(worker, pool, heartbeat_ms(pool));
}

void WorkerSet::send_to_lane(Worker& worker, const PoolHandle& pool, const RunEntryParts& entry) {
  const int id = worker.info.id;
  if (!worker.lane) ask_for_lane(worker, pool, entry.header.heartbeat_ms);
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

bool WorkerSet::lanes_may_sleep(std::vector<posix::FutexWatch>& watches) {
  watches.clear();
  if (busy_ == 0 || !sending_.empty() || !lane_results_.empty()) return false;
  for (int id : laned_) {
    Lane& lane = *workers_[id]->lane;
    if (lane.idle()) continue;
    // (One watch is the caller's own: ProgressEngine's inbox.)
    if (watches.size() + 1 == posix::kFutexWatchMax || !lane.may_sleep()) {
      lanes_awake();
      watches.clear();
      return false;
    }
    watches.push_back({&lane.answer_word(), 1});
  }
  if (static_cast<int>(watches.size()) == busy_) return true;
  lanes_awake();  // a worker whose chunks go through MPI
  watches.clear();
  return false;
}

void WorkerSet::lanes_awake() {
  for (int id : laned_) workers_[id]->lane->awake();
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
