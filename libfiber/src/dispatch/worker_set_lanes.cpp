// WorkerSet's lanes (worker_set.hpp, lane.hpp): the chunks of a worker on the master's host
// written into its task process's memory, the worker's answers about its lane, and the results
// read back.
#include <cstring>
#include <string>
#include <utility>

#include "dispatch/worker_set.hpp"
#include "fiber/errors.hpp"
#include "log.hpp"

namespace fiber::detail {

bool WorkerSet::lane_fits(const Worker& worker, const PoolHandle& pool) const {
  if (worker.lane) return true;  // (also once lanes_ went off: the worker waits on its lane)
  return lanes_ && !worker.lane_refused && pool.options.isolation == Isolation::process &&
         !pool.options.maxtasksperchild && worker.info.host == master_host_;
}

void WorkerSet::send_to_lane(Worker& worker, const PoolHandle& pool, const RunHeader& header,
                             std::initializer_list<std::span<const char>> parts) {
  const int id = worker.info.id;
  if (!worker.lane) {
    worker.lane =
        std::make_unique<Lane>(next_lane_id_++, [this, id](std::shared_ptr<Bytes> result) {
          lane_results_.emplace_back(id, std::move(result));
        });
    laned_.push_back(id);
    Bytes open;
    append_raw(open, worker.lane->id());
    append_raw(open, header.heartbeat_ms);
    worker.channel.send(MessageKind::lane_open, {open});
    sending_.push(id);
    log::debug("{} is asked for a lane to its task process (pool of {} workers)",
               where(worker.info), pool.workers.size());
  }
  Bytes body;
  for (auto part : parts) body.insert(body.end(), part.begin(), part.end());
  if (header.flags & kRunBroadcast) {  // for the worker to replay in later task processes
    std::uint64_t lane = worker.lane->id();
    worker.channel.send(MessageKind::replay, {bytes_of(lane), body});
    sending_.push(id);
  }
  worker.lane->send(body, Clock::now());
}

void WorkerSet::on_lane_message(Worker& worker, const Message& message, Clock::time_point now) {
  BodyReader reader(message.body);
  auto lane = reader.raw<std::uint64_t>();
  if (!worker.lane || worker.lane->id() != lane) return;  // closed since (dropped, parked)
  if (message.kind == MessageKind::lane_lost) {
    worker.channel.ring_after_sends({});  // the worker polls MPI again
    worker.lane->lost(reader.string(), now);
    close_lane(worker);
    return;
  }
  auto fd = reader.raw<std::int32_t>();
  std::string refusal = fd < 0 ? reader.string() : std::string();
  if (fd >= 0) {
    try {
      auto doorbell_fd = reader.raw<std::int32_t>();
      worker.lane->attach(static_cast<pid_t>(worker.info.pid), fd, doorbell_fd, now);
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
              where(worker.info), refusal);
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
      std::uint64_t lane_id = lane.id();
      worker.channel.send(MessageKind::lane_kill,
                          {bytes_of(lane_id), bytes_of(overdue->chunk), bytes_of(overdue->item)});
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
    // A result list of one entry. (Sized first and filled in place: growing it part by part
    // trips gcc 12's -Warray-bounds.)
    std::uint64_t size = entry->size();
    Message message{MessageKind::result, Bytes(sizeof size + entry->size())};
    std::memcpy(message.body.data(), &size, sizeof size);
    std::memcpy(message.body.data() + sizeof size, entry->data(), entry->size());
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
