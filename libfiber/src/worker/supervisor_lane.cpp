// Supervisor (supervisor.hpp): lending the task process to the master (docs/design.md, "The
// lane"), watching it while lent, and reporting its death.
#include <cstdint>
#include <string>

#include "fiber/errors.hpp"
#include "worker/supervisor.hpp"

namespace fiber::detail {

bool Supervisor::refuse_lane(Bytes& answer, std::string_view why) {
  lane_asked_.reset();
  append_raw(answer, std::int32_t{-1});
  append_string(answer, why);
  channel_.send(MessageKind::lane, {answer});
  return true;
}

bool Supervisor::open_lane() {
  std::uint64_t lane = *lane_asked_;
  Bytes answer;
  append_raw(answer, lane);
  if (!process_.running()) {
    if (lane_replayed_) {
      // The replay killed the new task process: the master keeps sending through this worker,
      // which replays it with the next chunk, as without a lane.
      lane_replayed_ = false;
      return refuse_lane(answer, "its task process died replaying the pool's initializer");
    }
    try {
      start_task_process(lane);
    } catch (const Error& error) {
      return refuse_lane(answer, error.what());
    }
    if (!chunks_.empty()) {
      lane_replayed_ = true;
      return true;  // lent once the replay is done
    }
  }
  if (!doorbell_) {
    try {
      doorbell_.emplace();
    } catch (const Error& error) {
      return refuse_lane(answer, error.what());
    }
  }
  lane_replayed_ = false;
  process_.lend();
  append_raw(answer, static_cast<std::int32_t>(process_.memory_fd()));
  append_raw(answer, static_cast<std::int32_t>(doorbell_->lent_fd()));
  channel_.send(MessageKind::lane, {answer});
  const auto now = Clock::now();
  lent_.emplace(LentLane{lane, LentWatch(lane_heartbeat_, now)});
  lane_asked_.reset();
  last_sent_ = now;
  return true;
}

void Supervisor::watch_lent_process(bool mpi_busy) {
  LentWatch& watch = lent_->watch;
  if (process_.wait_for_death(watch.nap(mpi_busy, Clock::now()), doorbell_->fd())) {
    return report_lane_lost(process_.death());
  }
  const auto now = Clock::now();
  if (doorbell_->answer()) watch.message_came(now);
  if (watch.look(process_.busy(), last_sent_, now)) {
    channel_.send(MessageKind::heartbeat);
    last_sent_ = now;
  }
}

void Supervisor::report_lane_lost(const std::string& death) {
  Bytes lost;
  append_raw(lost, lent_->id);
  append_string(lost, "the task process " + death);
  channel_.send(MessageKind::lane_lost, {lost});
  last_sent_ = Clock::now();
  lent_.reset();
}

void Supervisor::kill_lent_process(std::span<const char> body) {
  BodyReader kill(body);
  auto lane = kill.raw<std::uint64_t>();
  auto chunk = kill.raw<std::uint64_t>();
  auto item = kill.raw<std::uint32_t>();
  if (!lent_ || lent_->id != lane || process_.current_chunk() != chunk ||
      process_.current_item() != item) {
    return;
  }
  report_lane_lost(process_.kill());
}

}  // namespace fiber::detail
