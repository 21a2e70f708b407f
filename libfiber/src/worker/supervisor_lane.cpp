// Supervisor (supervisor.hpp): lending the task process to the master (docs/design.md, "The
// lane"), watching it while lent, and reporting its death.
#include <cstdint>
#include <string>

#include "fiber/errors.hpp"
#include "wire/messages.hpp"
#include "worker/supervisor.hpp"

namespace fiber::detail {

bool Supervisor::refuse_lane(std::uint64_t lane, std::string_view why) {
  lane_asked_.reset();
  channel_.send(LaneAnswer::refused(lane, std::string(why)));
  return true;
}

bool Supervisor::open_lane() {
  std::uint64_t lane = *lane_asked_;
  if (!process_.running()) {
    if (lane_replayed_) {
      // The replay killed the new task process: the master keeps sending through this worker,
      // which replays it with the next chunk, as without a lane.
      lane_replayed_ = false;
      return refuse_lane(lane, "its task process died replaying the pool's initializer");
    }
    try {
      start_task_process(lane);
    } catch (const Error& error) {
      return refuse_lane(lane, error.what());
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
      return refuse_lane(lane, error.what());
    }
  }
  lane_replayed_ = false;
  standby_ = false;  // the master's from now on
  process_.lend();
  channel_.send(LaneAnswer::lent(lane, process_.memory_fd(), doorbell_->lent_fd()));
  const auto now = Clock::now();
  lent_.emplace(LentLane{lane, LentWatch(lane_heartbeat_, now)});
  lane_asked_.reset();
  last_sent_ = now;
  return true;
}

void Supervisor::watch_lent_process(bool mpi_busy) {
  LentWatch& watch = lent_->watch;
  if (process_.wait_for_death(watch.nap(mpi_busy, process_.busy(), Clock::now()),
                              doorbell_->fd())) {
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
  channel_.send(LaneLost{lent_->id, "the task process " + death});
  last_sent_ = Clock::now();
  lent_.reset();
}

void Supervisor::kill_lent_process(std::span<const char> body) {
  auto kill = decode_message<LaneKill>(body);
  if (!lent_ || lent_->id != kill.lane || process_.current_chunk() != kill.chunk ||
      process_.current_item() != kill.item) {
    return;
  }
  report_lane_lost(process_.kill());
}

}  // namespace fiber::detail
