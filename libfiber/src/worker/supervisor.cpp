#include "worker/worker.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backoff.hpp"
#include "log.hpp"
#include "mpi/error.hpp"
#include "mpi/intercomm.hpp"
#include "mpi/request.hpp"
#include "reduction/partial_store.hpp"
#include "run_identity.hpp"
#include "shm/lane_doorbell.hpp"
#include "this_process.hpp"
#include "trace/hop_trace.hpp"
#include "wire/channel.hpp"
#include "wire/entry_list.hpp"
#include "wire/messages.hpp"
#include "wire/result_entry.hpp"
#include "wire/run_entry.hpp"
#include "wire/task_frames.hpp"
#include "worker/busy_heartbeat.hpp"
#include "worker/item_runner.hpp"
#include "worker/relay_link.hpp"
#include "worker/task_chunks.hpp"
#include "worker/task_process.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// How often an idle worker looks for messages once quiet, and a parked one (~0 % CPU).
constexpr auto kIdlePoll = 1ms;
constexpr auto kParkedPoll = 25ms;

// A worker whose task process is lent to the master is off every task's path: it sleeps in poll
// until its task process dies or the master rings its doorbell (lane_doorbell.hpp), and looks at
// MPI at least every kLaneNap anyway (the master's death; at most half the heartbeat interval).
constexpr auto kLaneNap = 100ms;
// For kLaneAwake after a message or a ring, and while MPI has work for it (a send not complete, a
// large body coming), it looks every kLanePoll instead: a message whose transfer needs this side's
// progress (a rendezvous) completes without another ring.
constexpr auto kLanePoll = 1ms;
constexpr auto kLaneAwake = 20ms;

// The worker's MPI process: takes chunks from the master, runs them (in its task process when
// the pool isolates tasks, else itself), sends results, heartbeats and crash reports. Several
// small chunks go to the task process at once, so that it does not wait for a round trip
// between them. A worker on the master's host may lend its task process to the master (a lane):
// then it only watches the task process, heartbeats, and reports its death.
class Supervisor {
 public:
  explicit Supervisor(MPI_Comm parent) : master_(parent), channel_(parent) {}

  void serve() {
    channel_.send(Hello{getpid(), this_process().host});
    channel_.post_receive(request_.get());
    while (!stopping_) {
      if (channel_.failure()) return lost_master();
      bool active = take_messages();
      if (stopping_) break;
      active |= take_relayed();
      if (lane_) {
        if (active) last_lane_message_ = Clock::now();
        bool sent = channel_.progress_sends();
        watch_lent_process(/*mpi_busy=*/!sent || channel_.receiving_body());
        continue;
      }
      active |= start_queued();
      if (!chunks_.empty()) active |= progress_child();
      if (lane_asked_ && queue_.empty() && chunks_.empty()) active |= open_lane();
      results_.send(channel_);
      send_heartbeat_if_due();
      channel_.progress_sends();
      if (active) {
        backoff_.activity();
      } else if (chunks_.empty()) {
        backoff_.pause(parked_ ? kParkedPoll : kIdlePoll);
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
      // spawn survives the loss of one member").
      master_.release();
      std::_Exit(0);
    }
    master_.disconnect();
  }

 private:
  // The connection to the master broke (it died, or its node did): nobody is left to work for.
  // The task process goes too; the connection is not disconnected (that would wait forever).
  [[noreturn]] void lost_master() {
    log::error("worker {} on {} lost its master ({}); it exits", this_process().id,
               this_process().host, *channel_.failure());
    process_.stop();
    std::_Exit(1);
  }

  // An initializer or broadcast call replayed in new task processes: its task, its run body, and
  // the lane it was written into by the master (0: none), which a new task process for that
  // lane gets from the master instead.
  struct Replayed {
    std::string task;
    Bytes body;
    std::uint64_t lane = 0;
  };

  // Relays' copies kept for stand-ins not here yet: one per broadcast in flight is enough (the
  // master sends a worker's stand-in right after the first relay's copy); a copy whose stand-in
  // was filled by the master's fallback meanwhile is dropped with the oldest.
  static constexpr std::size_t kMaxEarlyRelayed = 2;

  // Bodies this small may join the ring while the task process is busy, if the ring has room
  // for them, up to this many chunks.
  static constexpr std::size_t kPipelinedBody = std::size_t{16} * 1024;
  static constexpr std::size_t kPipelinedChunks = 32;
  // Results up to kBatchedEntryBytes are batched, for at most this long.
  static constexpr auto kResultDelay = 50us;

  // Handles the messages that have arrived, up to and including the first run message (its work
  // starts before the next test); true if there was one.
  bool take_messages() {
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
          parked_ = false;
          break;
        }
        case MessageKind::run:
          parked_ = false;
          for_each_entry(message->body, [this](std::span<const char> chunk) { enqueue(chunk); });
          break;
        case MessageKind::relay:
          relay(message->body);
          break;
        case MessageKind::drop:
          drop_all();
          break;
        case MessageKind::park:
          park();
          break;
        case MessageKind::lane_open: {
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
          remember(std::string(RunBody(replay.entry).task()),
                   Bytes(replay.entry.begin(), replay.entry.end()), replay.lane);
          break;
        }
        default:
          break;
      }
      channel_.post_receive(request_.get());
      // A run starts before the next test: a test that finds nothing gives the core away
      // (yield_when_idle), which on a busy node delayed the start by ~15 us.
      if (message->kind == MessageKind::run || message->kind == MessageKind::relay) return true;
    }
  }

  // A run entry from the master: queued, or the body of a stand-in queued before (kRunFromRelay)
  // that its relay did not deliver (kRunRelayFallback).
  void enqueue(std::span<const char> entry) {
    RunBody run(entry);
    hop_trace::mark(hop_trace::Point::worker_received, run.header().chunk_id);
    if (!(run.header().flags & kRunRelayFallback)) {
      queue_.emplace_back(entry.begin(), entry.end());
      if (run.header().flags & kRunFromRelay) fill_from_early_relayed();
      return;
    }
    std::uint64_t chunk_id = run.header().chunk_id;
    fill_stand_in([&](const RunBody& stand_in) { return stand_in.header().chunk_id == chunk_id; },
                  entry);
  }

  // This worker relays a broadcast from the master (dispatch/broadcast_routes.hpp): it forwards
  // the entry along its route, then runs it too.
  void relay(std::span<const char> body) {
    Relay routed = decode_message<Relay>(body);
    relay_.forward(routed.route, routed.entry);
    queue_.emplace_back(routed.entry.begin(), routed.entry.end());
  }

  // Forwards what relays sent here along its route and fills stand-ins with it; true if anything
  // came.
  bool take_relayed() {
    bool any = false;
    while (auto message = relay_.take()) {
      any = true;
      Relay routed = decode_message<Relay>(*message);
      relay_.forward(routed.route, routed.entry);
      if (!fill_relayed(routed.entry)) {
        // Here before its stand-in (which the master sent on another channel): kept for it.
        if (early_relayed_.size() == kMaxEarlyRelayed) early_relayed_.pop_front();
        early_relayed_.emplace_back(routed.entry.begin(), routed.entry.end());
      }
    }
    return any;
  }

  // Fills the stand-in that waits for `entry` (a relay's copy, under the first relay's chunk id);
  // false if none waits.
  bool fill_relayed(std::span<const char> entry) {
    std::uint64_t relayed_chunk = RunBody(entry).header().chunk_id;
    return fill_stand_in(
        [&](const RunBody& stand_in) { return stand_in.relay_chunk() == relayed_chunk; }, entry);
  }

  // A stand-in was queued: a relay's copy that came before it fills it.
  void fill_from_early_relayed() {
    std::erase_if(early_relayed_, [&](const Bytes& entry) { return fill_relayed(entry); });
  }

  // Replaces the first queued stand-in that `matches` with `entry`, under the stand-in's chunk id
  // and flags (less kRunFromRelay); false if none matches (a body nobody waits for any more).
  template <class Matches>
  bool fill_stand_in(const Matches& matches, std::span<const char> entry) {
    for (auto& queued : queue_) {
      RunBody stand_in(queued);
      if (!(stand_in.header().flags & kRunFromRelay) || !matches(stand_in)) continue;
      RunHeader header = stand_in.header();
      header.flags &= ~kRunFromRelay;
      queued = with_header(entry, header);
      return true;
    }
    return false;
  }

  // The pool was terminated: queued chunks come back cancelled, running ones are killed. A lent
  // task process is killed too: what it holds the master has cancelled.
  void drop_all() {
    lane_asked_.reset();
    lane_replayed_ = false;
    if (lane_) {
      process_.kill();
      lane_.reset();
    }
    for (const auto& body : queue_) {
      send_result(std::make_shared<Bytes>(
          itemless_result(RunBody(body).header().chunk_id, ChunkStatus::cancelled)));
    }
    queue_.clear();
    if (chunks_.empty()) return;
    process_.kill();
    chunks_.cancel_all();
    answers_.clear();
  }

  // No pool holds this worker: end the task process (and with it the tasks' memory and the
  // pool's initializer and broadcast state), give memory back, and sleep long between polls.
  void park() {
    lane_asked_.reset();
    lane_replayed_ = false;
    lane_.reset();
    process_.stop();
    replayed_.clear();
    malloc_trim(0);
    parked_ = true;
  }

  // --- the lane ---

  // Answers the master's lane_open for `lane` with why the task process cannot be lent; its
  // chunks keep coming through this worker.
  bool refuse_lane(std::uint64_t lane, std::string_view why) {
    lane_asked_.reset();
    channel_.send(LaneAnswer::refused(lane, std::string(why)));
    return true;
  }

  // The master asked for the task process (lane_open) and every chunk sent before is answered:
  // a task process is started if none runs (replaying what the master did not write into this
  // lane; answered next time), then its memory is lent. True if anything happened.
  bool open_lane() {
    std::uint64_t lane = *lane_asked_;
    if (!process_.running()) {
      if (lane_replayed_) {
        // The replay killed the new task process: the master keeps sending through this worker,
        // which replays it with the next chunk, as without a lane.
        lane_replayed_ = false;
        return refuse_lane(lane, "its task process died replaying the pool's initializer");
      }
      try {
        process_.start();
      } catch (const Error& error) {
        return refuse_lane(lane, error.what());
      }
      tasks_in_process_ = 0;
      for (const auto& call : replayed_) {
        if (call.lane != lane) send_to_child(Bytes(call.body), /*silent=*/true);
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
    process_.lend();
    channel_.send(LaneAnswer::lent(lane, process_.memory_fd(), doorbell_->lent_fd()));
    lane_ = lane;
    lane_asked_.reset();
    last_sent_ = last_lane_look_ = Clock::now();
    return true;
  }

  // The task process is the master's to feed: this worker sleeps until it dies, the master rings
  // or a nap passes (kLaneNap, or kLanePoll while MPI is busy or a message came just now),
  // reports a death, and heartbeats while the task process has work, and once after it did not
  // run for a heartbeat's interval (stopped, starved): a master that took it for lost meanwhile
  // hears that it lives, though its task process may have nothing left to do.
  void watch_lent_process(bool mpi_busy) {
    const bool awake = mpi_busy || Clock::now() - last_lane_message_ < kLaneAwake;
    const auto nap =
        awake
            ? kLanePoll
            : std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(lane_heartbeat_ / 2),
                         kLanePoll, std::chrono::milliseconds(kLaneNap));
    if (process_.wait_for_death(nap, doorbell_->fd())) return report_lane_lost(process_.death());
    const auto now = Clock::now();
    if (doorbell_->answer()) last_lane_message_ = now;
    const bool stalled = now - last_lane_look_ > lane_heartbeat_;
    last_lane_look_ = now;
    if ((process_.busy() || stalled) && now - last_sent_ >= lane_heartbeat_) {
      channel_.send(MessageKind::heartbeat);
      last_sent_ = now;
    }
  }

  void report_lane_lost(const std::string& death) {
    channel_.send(LaneLost{*lane_, "the task process " + death});
    last_sent_ = Clock::now();
    lane_.reset();
  }

  // The master saw an item of a lane run past its timeout: kill the task process, unless it has
  // moved on since.
  void kill_lent_process(std::span<const char> body) {
    auto kill = decode_message<LaneKill>(body);
    if (lane_ != kill.lane || process_.current_chunk() != kill.chunk ||
        process_.current_item() != kill.item) {
      return;
    }
    report_lane_lost(process_.kill());
  }

  // Starts what it can of the queue; true if it started anything.
  bool start_queued() {
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
      Bytes body = std::move(queue_.front());
      queue_.pop_front();
      started = true;
      if (flags & kRunInitializer) {  // a new pool: a fresh task process
        process_.stop();
        replayed_.clear();
      }
      if (!isolated) {
        run_here(RunBody(body));
        continue;
      }
      if (!process_.running()) {
        process_.start();
        tasks_in_process_ = 0;
        for (const auto& call : replayed_) send_to_child(Bytes(call.body), /*silent=*/true);
      }
      if (flags & (kRunInitializer | kRunBroadcast)) remember(std::string(run.task()), body, 0);
      if (counted) ++tasks_in_process_;
      send_to_child(std::move(body), /*silent=*/false);
    }
    return started;
  }

  // Whether the task process has run the chunks of tasks its pool allows it (maxtasksperchild).
  bool lifetime_over(const RunHeader& header) const {
    return header.tasks_per_process > 0 && process_.running() &&
           tasks_in_process_ >= header.tasks_per_process;
  }

  // Keeps an initializer or broadcast call to replay in the next task processes (written by the
  // master into `lane`, or 0); a broadcast replaces the previous one of its task.
  void remember(const std::string& task, const Bytes& body, std::uint64_t lane) {
    auto same = std::find_if(replayed_.begin(), replayed_.end(),
                             [&](const Replayed& call) { return call.task == task; });
    if (same != replayed_.end()) {
      *same = {task, body, lane};
    } else {
      replayed_.push_back({task, body, lane});
    }
  }

  bool fits_ring() const {
    return chunks_.size() < kPipelinedChunks && queue_.front().size() <= kPipelinedBody &&
           process_.fits(queue_.front().size());
  }

  // Runs a chunk in this process (the pool does not isolate tasks).
  void run_here(const RunBody& run) {
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
    finish_result_entry(*result, result_header(chunk_id, run.count(), ChunkStatus::complete,
                                               Clock::now() - started));
    send_result(result);
  }

  // Results go out in batches: a small one waits for others for at most kResultDelay, a large
  // one goes at once, sent in place.
  void send_result(const std::shared_ptr<Bytes>& result) {
    if (result->size() > kBatchedEntryBytes) {
      channel_.send(MessageKind::result, {entry_size_prefix(result->size()), *result}, result);
    } else {
      if (results_.empty()) first_batched_ = Clock::now();
      results_.add({*result});
    }
    last_sent_ = Clock::now();
    if (results_.full() || Clock::now() - first_batched_ > kResultDelay) results_.send(channel_);
  }

  void send_to_child(Bytes body, bool silent) {
    auto header = RunBody(body).header();
    hop_trace::mark(hop_trace::Point::worker_forwarded, header.chunk_id);
    chunks_.add(header, silent, Clock::now());
    // A failed write means the child is gone: progress_child() reads what it wrote before it
    // died, then its end of file, and only then says which chunk it died in.
    process_.send(body);
  }

  // Takes in what the task process wrote and ends the chunks that are complete; handles its
  // death and deadlines. True if anything happened.
  bool progress_child() {
    // Wait on the ring (the child wakes us when it writes), briefly: MPI messages need polling.
    auto quiet = Clock::now() - std::max(chunks_.last_record(), chunks_.front_sent());
    auto wait = quiet < 1ms ? 0us : 200us;
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
    if (!progressed && wait.count() == 0) sched_yield();
    return progressed;
  }

  // While it has work, a worker says so at least as often as its chunk's pool asks: the master's
  // sign that it lives.
  static Clock::duration heartbeat_interval(const RunHeader& header) {
    return std::chrono::milliseconds(header.heartbeat_ms);
  }

  void send_heartbeat_if_due() {
    if (chunks_.empty() && queue_.empty()) return;
    RunHeader running = chunks_.empty() ? RunBody(queue_.front()).header() : chunks_.front();
    if (Clock::now() - last_sent_ < heartbeat_interval(running)) return;
    channel_.send(MessageKind::heartbeat);
    last_sent_ = Clock::now();
  }

  mpi::Intercomm master_;
  Channel channel_;
  mpi::Request request_;  // the receive from the master
  RelayLink relay_;       // to the other workers of this spawn
  // Relays' copies that came before their stand-ins, the latest kMaxEarlyRelayed.
  std::deque<Bytes> early_relayed_;
  std::deque<Bytes> queue_;  // run bodies received, not yet started
  // Sent to the task process, in its order; their results go to the master.
  TaskChunks chunks_{[this](std::shared_ptr<Bytes> result) { send_result(result); }};
  task_frames::AnswerReader answers_;  // from the task process, split into records
  Batch results_{MessageKind::result};
  Clock::time_point first_batched_;
  // The pool's initializer and broadcast calls, replayed in new task processes.
  std::vector<Replayed> replayed_;
  TaskProcess process_;
  std::uint32_t tasks_in_process_ = 0;  // chunks of tasks sent to the running task process
  ItemRunner runner_;
  // Started by the first chunk run in this process (Isolation::none): heartbeats meanwhile.
  std::optional<BusyHeartbeat> busy_heartbeat_;
  Backoff backoff_{10ms, 1ms};
  Clock::time_point last_sent_ = Clock::now();
  // The lane the master asked for (lane_open), not lent yet; the one lent (its task process is
  // the master's to feed); how often to heartbeat meanwhile.
  std::optional<std::uint64_t> lane_asked_;
  std::optional<std::uint64_t> lane_;
  Clock::duration lane_heartbeat_{};
  Clock::time_point last_lane_look_;     // when it last looked at its lent task process
  Clock::time_point last_lane_message_;  // when a message or a ring last came while lent
  // Rung by the master while the task process is lent (made with the first lane).
  std::optional<LaneDoorbell> doorbell_;
  bool lane_replayed_ = false;  // a new task process replays for the lane asked for
  bool parked_ = false;
  bool stopping_ = false;
  bool disconnect_ = true;
};

}  // namespace

void serve_as_worker(MPI_Comm parent) {
  // Errors on the master's connection come back as codes (the worker then exits with a word),
  // not as MPI's abort of the whole job.
  mpi::check(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  Supervisor(parent).serve();
  MPI_Finalize();
  std::exit(0);
}

}  // namespace fiber::detail
