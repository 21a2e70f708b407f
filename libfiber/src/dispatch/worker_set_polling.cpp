// WorkerSet's listening (worker_set.hpp): one MPI_Testsome over every worker's receive, the
// lanes' answers, and the sends still in flight.
#include <fmt/format.h>

#include <exception>
#include <utility>

#include "dispatch/worker_set.hpp"
#include "fiber/errors.hpp"
#include "mpi/error.hpp"

namespace fiber::detail {
namespace {

// While every worker with chunks in flight has lent its task process to the master, nothing the
// master waits for comes through MPI but a worker's rare word (a death, a heartbeat, a hello):
// poll() looks at MPI this often then, not every round, since an MPI_Testsome that finds nothing
// gives the core away (yield_when_idle; docs/design.md, "The lane", has the measurement).
constexpr auto kLanedMpiLook = std::chrono::microseconds(100);

}  // namespace

bool WorkerSet::mpi_can_wait(int lent_busy, Clock::time_point now) const {
  return busy_ > 0 && lent_busy == busy_ && sending_.empty() &&
         now - last_mpi_look_ < kLanedMpiLook;
}

bool WorkerSet::poll(Clock::time_point now, const std::function<void(int, Message&)>& on_message) {
  int lent_busy = 0;
  bool moved = progress_lanes(now, lent_busy);
  std::exception_ptr failure;
  // (Older than what arrives now: taken first, so that each worker's messages keep their order.)
  moved |= deliver_held(on_message, failure);
  int completed = MPI_UNDEFINED;  // (MPI left alone, or no receive active)
  if (!mpi_can_wait(lent_busy, now)) {
    last_mpi_look_ = now;
    completed = take_arrived(now, on_message, failure);
  }
  try {
    deliver_lane_results(on_message);
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  if (completed != MPI_UNDEFINED) progress_sends();
  if (failure) std::rethrow_exception(failure);
  return completed > 0 || moved;  // none came: a quiet round, after which one may back off
}

bool WorkerSet::deliver_held(const std::function<void(int, Message&)>& on_message,
                             std::exception_ptr& failure) {
  if (held_messages_.empty()) return false;
  for (auto& [id, message] : std::exchange(held_messages_, {})) {
    try {
      on_message(id, message);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    heard_from(id);
  }
  return true;
}

int WorkerSet::take_arrived(Clock::time_point now,
                            const std::function<void(int, Message&)>& on_message,
                            std::exception_ptr& failure) {
  int completed = 0;
  int rc = receives_.test_some(completed);
  // A receive that completed in error (its worker died mid-message, its connection broke) is
  // that worker's failure alone; the statuses say which (and only with MPI_ERR_IN_STATUS).
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
    throw Error("fiber: MPI_Testsome failed: " + mpi::error_text(rc));
  }
  if (completed == MPI_UNDEFINED) return completed;
  // Every completed receive is taken (and posted again) even if one of them throws: a request
  // left completed would silence its worker for good.
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
  return completed;
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
    if (message->kind == MessageKind::standby) return on_standby(worker, *message);
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

void WorkerSet::progress_sends() {
  for (std::size_t listed = sending_.size(); listed > 0; --listed) {
    int id = sending_.pop();
    Worker& worker = *workers_[id];
    if (!worker.dead && !worker.channel.progress_sends()) sending_.push(id);
  }
}

}  // namespace fiber::detail
