// Supervisor (supervisor.hpp): feeding the task process, running chunks in this process,
// results and heartbeats.
#include <sched.h>

#include <algorithm>
#include <string>
#include <utility>

#include "trace/hop_trace.hpp"
#include "wire/result_entry.hpp"
#include "worker/supervisor.hpp"

namespace fiber::detail {
namespace {

std::chrono::milliseconds heartbeat_interval(const RunHeader& header) {
  return std::chrono::milliseconds(header.heartbeat_ms);
}

}  // namespace

bool Supervisor::start_queued() {
  bool started = false;
  while (!queue_.empty()) {
    RunBody run(queue_.front());
    std::uint32_t flags = run.header().flags;
    if (flags & kRunFromRelay) break;  // its body is still on the way from the relay
    bool isolated = flags & kRunIsolated;
    bool counted = isolated && !(flags & (kRunInitializer | kRunBroadcast));
    if (counted && lifetime_over(run.header())) {
      if (!chunks_.empty()) break;  // it finishes what it holds first
      process_.stop();              // a fresh one replays the initializer below
    }
    // An initializer or a chunk to run here waits until the task process is idle.
    if (!chunks_.empty() && (!isolated || (flags & kRunInitializer) || !fits_ring())) break;
    Bytes body = queue_.pop_front();
    started = true;
    if (flags & kRunInitializer) {  // a new pool: a fresh task process, the standby if alive
      if (!standby_ || process_.wait_for_death(std::chrono::milliseconds(0))) process_.stop();
      replays_.clear();
    }
    if (!isolated) {
      run_here(RunBody(body));
      continue;
    }
    if (!process_.running()) start_task_process();
    if (counted) ++tasks_in_process_;
    if (flags & (kRunInitializer | kRunBroadcast)) {
      send_to_child(replays_.remember(std::move(body)), /*silent=*/false);
    } else {
      send_to_child(body, /*silent=*/false);
    }
  }
  return started;
}

bool Supervisor::lifetime_over(const RunHeader& header) const {
  return header.tasks_per_process > 0 && process_.running() &&
         tasks_in_process_ >= header.tasks_per_process;
}

bool Supervisor::fits_ring() const {
  return chunks_.size() < kPipelinedChunks && queue_.front().size() <= kPipelinedBody &&
         process_.fits(queue_.front().size());
}

void Supervisor::start_task_process(std::optional<std::uint64_t> lane) {
  process_.start();
  tasks_in_process_ = 0;
  standby_ = false;
  for (auto entry : replays_.to_replay(lane)) {
    send_to_child(entry, /*silent=*/true);
  }
}

void Supervisor::send_to_child(std::span<const char> body, bool silent) {
  standby_ = false;
  auto header = RunBody(body).header();
  hop_trace::mark(hop_trace::Point::worker_forwarded, header.chunk_id);
  chunks_.add(header, silent, Clock::now());
  // A failed write means the child is gone: progress_child() reads what it wrote before it
  // died, then its end of file, and only then says which chunk it died in.
  process_.send(body, [this] {
    send_heartbeat_if_due();
    channel_.progress_sends();
  });
}

bool Supervisor::progress_child() {
  // Wait on the ring (the child wakes us when it writes): MPI messages need polling, unless the
  // master rings for them.
  std::chrono::microseconds wait = ring_wait();
  bool napped = false;
  if (wait.count() > 0 && may_nap_while_task_runs()) {
    if (nap_while_task_runs()) return true;  // rung: what for may be a moment behind the ring
    wait = std::chrono::microseconds(0);
    napped = true;
  }
  std::string death;
  std::uint64_t before = answers_.received();
  bool alive = process_.receive(answers_, wait, death);
  bool progressed = answers_.received() != before;
  chunks_.take(answers_, Clock::now());
  if (!alive) {
    chunks_.died("the task process " + death, process_.progress(), Clock::now());
    answers_.clear();
    return true;
  }
  if (auto item = chunks_.overdue(process_.progress(), Clock::now())) {
    process_.kill();
    chunks_.timed_out(*item, Clock::now());
    answers_.clear();
    return true;
  }
  if (!progressed && wait.count() == 0 && !napped) sched_yield();
  return progressed;
}

bool Supervisor::may_nap_while_task_runs() {
  return doorbell_when_idle_.fd() >= 0 && backoff_.quiet() >= kSpinBeforeSleep && queue_.empty() &&
         results_.empty() && !lane_asked_ && !channel_.receiving_body() && !relay_.forwarding() &&
         !relay_.receiving() && channel_.progress_sends();
}

bool Supervisor::nap_while_task_runs() {
  if (!asleep_) {
    // As wait_idle: the rings that came while it was awake are stale; MPI is looked at once more
    // before the first nap, in case the last was just rung for.
    doorbell_when_idle_.answer();
    asleep_ = true;
    task_naps_ = 0;
    return false;
  }
  const auto now = Clock::now();
  const auto longest = task_naps_++ == 0 ? kFirstTaskNap : kIdleNap;
  auto until = std::min(now + longest, last_sent_ + heartbeat_interval(chunks_.front()));
  if (auto due = chunks_.deadline(process_.progress())) until = std::min(until, *due);
  if (until <= now || !process_.sleep_until_news(until - now, doorbell_when_idle_.fd())) {
    return false;
  }
  doorbell_when_idle_.answer();
  return true;
}

std::chrono::microseconds Supervisor::ring_wait() const {
  using std::chrono::microseconds;
  const auto quiet = Clock::now() - std::max(chunks_.last_record(), chunks_.front_sent());
  if (quiet < kRecentRecord) return microseconds(0);
  const auto longest = std::max<Clock::duration>(
      kRingWait, std::min<Clock::duration>(kLongRingWait, heartbeat_interval(chunks_.front()) / 2));
  return std::chrono::duration_cast<microseconds>(
      std::clamp<Clock::duration>(quiet / kRingWaitFraction, kRingWait, longest));
}

void Supervisor::run_here(const RunBody& run) {
  const std::uint64_t chunk_id = run.header().chunk_id;
  hop_trace::mark(hop_trace::Point::worker_forwarded, chunk_id);
  hop_trace::mark(hop_trace::Point::task_started, chunk_id);
  auto started = Clock::now();
  auto result = std::make_shared<Bytes>(begin_result_entry());
  if (!busy_heartbeat_) {
    busy_heartbeat_.emplace([this] {
      channel_.send(MessageKind::heartbeat);
      channel_.progress_sends();
    });
  }
  {
    // No MPI call on this thread meanwhile.
    BusyHeartbeat::Running running(*busy_heartbeat_, heartbeat_interval(run.header()));
    for (std::uint32_t i = 0; i < run.count(); ++i) runner_.run(run, i, *result);
  }
  hop_trace::mark(hop_trace::Point::task_ended, chunk_id);
  hop_trace::mark(hop_trace::Point::worker_answered, chunk_id);
  finish_result_entry(
      *result, result_header(chunk_id, run.count(), ChunkStatus::complete, Clock::now() - started));
  send_result(result);
}

void Supervisor::send_result(const std::shared_ptr<Bytes>& result) {
  if (ahead_chunk_ && ResultEntryReader(*result).header().chunk_id == *ahead_chunk_) {
    return report_standby(*result);
  }
  if (result->size() > kBatchedEntryBytes) {
    channel_.send(MessageKind::result, {entry_size_prefix(result->size()), *result}, result);
  } else {
    if (results_.empty()) first_batched_ = Clock::now();
    results_.add({*result});
  }
  last_sent_ = Clock::now();
  if (results_.full() || Clock::now() - first_batched_ > kResultDelay) results_.send(channel_);
}

void Supervisor::send_heartbeat_if_due() {
  if (!chunks_.empty()) {
    heartbeat_every_ = heartbeat_interval(chunks_.front());
  } else if (!queue_.empty()) {
    heartbeat_every_ = heartbeat_interval(RunBody(queue_.front()).header());
  } else if (!channel_.receiving_body()) {
    return;
  }
  if (Clock::now() - last_sent_ < heartbeat_every_) return;
  channel_.send(MessageKind::heartbeat);
  last_sent_ = Clock::now();
}

}  // namespace fiber::detail
