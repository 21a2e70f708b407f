#include "worker/supervisor.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "log.hpp"
#include "mpi/error.hpp"
#include "posix/wait_readable.hpp"
#include "reduction/partial_store.hpp"
#include "run_identity.hpp"
#include "this_process.hpp"
#include "trace/hop_trace.hpp"
#include "wire/messages.hpp"
#include "wire/result_entry.hpp"
#include "worker/mpi_segment.hpp"
#include "worker/worker.hpp"
#include "worker/worker_shape.hpp"

namespace fiber::detail {

void Supervisor::serve() {
  channel_.send(Hello{getpid(), this_process().host, doorbell_when_idle_.port(),
                      WorkerDoorbell::host_addresses(), offered_cpus(),
                      offered_gpus(this_process().host)});
  channel_.post_receive(request_.get());
  while (!stopping_) {
    if (channel_.failure()) lost_master();
    if (daemon_.gone(Clock::now())) lost_daemon();
    bool active = take_messages();
    if (stopping_) break;
    // Each step may take seconds with a large body on a busy node (a copy of hundreds of MB):
    // the master hears from this worker between them.
    send_heartbeat_if_due();
    active |= take_relayed();
    send_heartbeat_if_due();
    if (lent_) {
      if (active) lent_->watch.message_came(Clock::now());
      bool sent = channel_.progress_sends();
      watch_lent_process(/*mpi_busy=*/!sent || channel_.receiving_body());
      continue;
    }
    active |= start_queued();
    send_heartbeat_if_due();
    if (!chunks_.empty()) active |= progress_child();
    if (lane_asked_ && queue_.empty() && chunks_.empty()) active |= open_lane();
    results_.send(channel_);
    send_heartbeat_if_due();
    bool sent = channel_.progress_sends();
    if (active) {
      backoff_.activity();
      asleep_ = false;
    } else if (chunks_.empty()) {
      const bool under_way = !sent || !queue_.empty() || !results_.empty() || lane_asked_ ||
                             channel_.receiving_body() || relay_.forwarding() || relay_.receiving();
      if (under_way || backoff_.quiet() < kSpinBeforeSleep || !start_standby_if_wanted()) {
        wait_idle(under_way);
      }
    }
  }
  process_.stop();
  unlink_node_arrays();
  partial_store::remove_all_of_run();
  hop_trace::write();
  channel_.wait_sends();
  relay_.finish();
  if (!disconnect_) {
    // A sibling of this spawn was lost: a disconnect would wait for it forever, and
    // MPI_Finalize would try to flush the connection to it (UCX prints errors); nothing follows
    // the runtime's end, so this worker leaves at once (docs/platform.md, "A batch from one
    // spawn survives the loss of one member"). Status 0 without MPI_Finalize is a normal end
    // under the launch defaults, else one PMIx error line ("A clean end").
    master_.release();
    std::_Exit(0);
  }
  master_.disconnect();
}

void Supervisor::lost_master() {
  log::error("worker {} on {} lost its master ({}); it exits", this_process().id,
             this_process().host, *channel_.failure());
  process_.stop();
  std::_Exit(1);
}

void Supervisor::lost_daemon() {
  // The daemon would have removed it at this process's end. First: the output went through the
  // daemon, so the line below may end this process (SIGPIPE).
  unlink_own_mpi_segment();
  process_.stop();
  log::error("worker {} on {} lost its node daemon; it exits (its node can take no spawn)",
             this_process().id, this_process().host);
  std::_Exit(1);
}

void Supervisor::answer_probe() {
  // The master spawns after the answer, and a spawn after a node daemon's end ends the whole job
  // (docs/platform.md, "A lost node forbids spawns"): a worker whose daemon is gone leaves
  // instead (the master takes its silence for its node's loss).
  if (daemon_.gone_now()) lost_daemon();
  channel_.send(MessageKind::heartbeat);
  last_sent_ = Clock::now();
}

bool Supervisor::take_messages() {
  bool any = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    if (!request_.active()) return any;  // the channel failed
    int rc = MPI_Test(request_.get(), &arrived, &status);
    if (rc != MPI_SUCCESS) {
      channel_.fail("a receive from the master failed: " + mpi::error_text(rc));
      return any;
    }
    if (!arrived) return any;
    any = true;
    auto message = channel_.on_received(status, request_.get());
    if (!message) continue;
    switch (message->kind) {
      case MessageKind::shutdown:
        // Whether the master disconnects this worker's spawn (not if a sibling was lost).
        disconnect_ = decode_message<Shutdown>(message->body).disconnect;
        stopping_ = true;
        return true;
      case MessageKind::welcome: {
        auto welcome = decode_message<Welcome>(message->body);
        this_process().id = welcome.id;
        set_run_identity(welcome.run_identity);
        take_shape(welcome.cpus, welcome.gpus, welcome.threads);
        process_.limit_memory(welcome.memory_limit);
        parked_ = false;
        standby_wanted_ = false;  // its runs fork a task process if need be
        // A pool of a shape takes it: a standby forked before has none of it (its binding,
        // variables, memory limit): it ends, and the pool's first run forks a task process anew
        // (which replays the kept initializer if the pool keeps it).
        if ((standby_ || ran_ahead_) && (!welcome.cpus.empty() || !welcome.gpus.empty() ||
                                         welcome.threads > 0 || welcome.memory_limit > 0)) {
          end_ran_ahead();
        }
        break;
      }
      case MessageKind::keep:
        taken_by_pool(/*keep=*/true);
        break;
      case MessageKind::run:
        taken_by_pool(/*keep=*/false);
        parked_ = false;
        standby_wanted_ = false;
        for_each_entry(message->body, [this](std::span<const char> entry) {
          hop_trace::mark(hop_trace::Point::worker_received, RunBody(entry).header().chunk_id);
          queue_.add_from_master(entry);
        });
        break;
      case MessageKind::relay:
        taken_by_pool(/*keep=*/false);
        relay(message->body);
        break;
      case MessageKind::drop:
        drop_all();
        break;
      case MessageKind::park:
        park();
        break;
      case MessageKind::lane_open: {
        taken_by_pool(/*keep=*/false);
        auto open = decode_message<LaneOpen>(message->body);
        lane_asked_ = open.lane;
        lane_heartbeat_ = std::chrono::milliseconds(open.heartbeat_ms);
        break;
      }
      case MessageKind::lane_kill:
        kill_lent_process(message->body);
        break;
      case MessageKind::replay: {
        auto replay = decode_message<Replay>(message->body);
        replays_.remember(Bytes(replay.entry.begin(), replay.entry.end()), replay.lane);
        break;
      }
      case MessageKind::probe:
        answer_probe();
        break;
      default:
        break;
    }
    channel_.post_receive(request_.get());
    // A run starts before the next test: a test that finds nothing gives the core away
    // (yield_when_idle), which on a busy node delays the start.
    if (message->kind == MessageKind::run || message->kind == MessageKind::relay) return true;
  }
}

void Supervisor::relay(std::span<const char> body) {
  Relay routed = decode_message<Relay>(body);
  relay_.forward(routed.route, routed.entry);
  queue_.add(routed.entry);
}

bool Supervisor::take_relayed() {
  bool any = false;
  while (auto message = relay_.take()) {
    any = true;
    send_heartbeat_if_due();  // (the message's transfer may have taken seconds)
    Relay routed = decode_message<Relay>(*message);
    relay_.forward(routed.route, routed.entry);
    // (Here before its stand-in, which the master sent on another channel: kept for it.)
    queue_.add_relayed(routed.entry);
  }
  return any;
}

void Supervisor::drop_all() {
  lane_asked_.reset();
  lane_replayed_ = false;
  if (lent_) {
    process_.kill();
    lent_.reset();
  }
  for (const auto& entry : queue_.take_all()) {
    send_result(std::make_shared<Bytes>(
        itemless_result(RunBody(entry).header().chunk_id, ChunkStatus::cancelled)));
  }
  if (chunks_.empty()) return;
  process_.kill();
  chunks_.cancel_all();
  answers_.clear();
}

void Supervisor::park() {
  lane_asked_.reset();
  lane_replayed_ = false;
  lent_.reset();
  // A worker whose pool ran tasks in a task process gets a fresh one for the next pool.
  standby_wanted_ = process_.running() || standby_;
  process_.stop();
  standby_ = false;
  ran_ahead_ = false;
  ahead_chunk_.reset();
  replays_.keep_ahead();
  malloc_trim(0);
  parked_ = true;
  awaiting_pool_ = true;
  ++parks_;
}

void Supervisor::taken_by_pool(bool keep) {
  if (!awaiting_pool_) return;
  awaiting_pool_ = false;
  if (keep) {
    // The pool's task process from now on; if it died meanwhile, the next one replays the kept
    // initializer.
    if (process_.running() && process_.wait_for_death(std::chrono::milliseconds(0))) {
      process_.stop();
    }
    ran_ahead_ = false;
    return;
  }
  replays_.clear();
  if (ran_ahead_) end_ran_ahead();
}

void Supervisor::end_ran_ahead() {
  if (chunks_.empty()) {
    process_.stop();
  } else {  // (the run ahead itself, not yet answered: its result goes to report_standby)
    process_.kill();
    chunks_.cancel_all();
    answers_.clear();
  }
  standby_ = false;
  ran_ahead_ = false;
}

void Supervisor::report_standby(const Bytes& result) {
  ahead_chunk_.reset();
  ResultEntryReader reader(result);
  bool ok = reader.header().status == ChunkStatus::complete && reader.header().count > 0;
  for (std::uint32_t i = 0; ok && i < reader.header().count; ++i) ok = reader.next_item().ok;
  if (!ok || !parked_) return;  // a pool that comes now sends the initializer again
  channel_.send(StandbyReady{parks_});
  last_sent_ = Clock::now();
}

bool Supervisor::start_standby_if_wanted() {
  if (!standby_wanted_) return false;
  standby_wanted_ = false;
  try {
    process_.start();
    tasks_in_process_ = 0;
    standby_ = true;
    if (auto ahead = replays_.ahead()) {
      ahead_chunk_ = RunBody(*ahead).header().chunk_id;
      ran_ahead_ = true;
      send_to_child(*ahead, /*silent=*/false);
    }
  } catch (const Error& error) {  // tried again when the next pool's first run comes
    log::warn("worker {}: no task process to stand by while parked ({})", this_process().id,
              error.what());
  }
  return true;
}

void Supervisor::wait_idle(bool under_way) {
  if (under_way || doorbell_when_idle_.fd() < 0) {
    backoff_.pause(parked_ ? kParkedPoll : kIdlePoll);
    return;
  }
  const auto quiet = backoff_.quiet();
  if (quiet < kSpinBeforeSleep) {
    backoff_.pause();
    return;
  }
  if (!asleep_) {
    // Rings that came while it was awake are stale (the master rings after its own quiet spell,
    // shorter than this one): taken, then one more look at MPI before the first nap, in case the
    // last was just rung for.
    doorbell_when_idle_.answer();
    asleep_ = true;
    return;
  }
  // A ring wakes it at once, so the nap may grow fast; the first ones stay short, in case a
  // message came unrung (sent within kQuietBeforeRing of another that the worker missed).
  const auto nap = std::min<Clock::duration>(quiet / kNapFraction, kIdleNap);
  if (posix::wait_readable(doorbell_when_idle_.fd(), nap)) {
    // Awake as after a message: what the master rang for may be a moment behind the ring.
    doorbell_when_idle_.answer();
    backoff_.activity();
    asleep_ = false;
  }
}

void serve_as_worker(MPI_Comm parent) {
  // Errors on the master's connection come back as codes (the worker then exits with a word),
  // not as MPI's abort of the whole job.
  mpi::check(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  Supervisor(parent).serve();
  MPI_Finalize();
  std::exit(0);
}

}  // namespace fiber::detail
