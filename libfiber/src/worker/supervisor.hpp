// The worker's MPI process: takes chunks from the master, runs them (in its task process when
// the pool isolates tasks, else itself), sends results, heartbeats and crash reports. Several
// small chunks go to the task process at once, so that it does not wait for a round trip
// between them. A worker on the master's host may lend its task process to the master (a lane):
// then it only watches the task process, heartbeats, and reports its death.
//
// One class, its parts in files by job: supervisor.cpp (the loop, the master's messages, the
// end), supervisor_tasks.cpp (feeding the task process, running chunks here, results and
// heartbeats), supervisor_lane.cpp (lending the task process). What can be tested without MPI
// is in objects of its own: RunQueue (stand-ins), Replays, LentWatch, TaskChunks.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "backoff.hpp"
#include "fiber/pool.hpp"
#include "fiber/serialization.hpp"
#include "mpi/intercomm.hpp"
#include "mpi/request.hpp"
#include "shm/lane_doorbell.hpp"
#include "wire/channel.hpp"
#include "wire/entry_list.hpp"
#include "wire/run_entry.hpp"
#include "wire/task_frames.hpp"
#include "wire/worker_doorbell.hpp"
#include "worker/busy_heartbeat.hpp"
#include "worker/daemon_watch.hpp"
#include "worker/item_runner.hpp"
#include "worker/lent_watch.hpp"
#include "worker/relay_link.hpp"
#include "worker/replays.hpp"
#include "worker/run_queue.hpp"
#include "worker/task_chunks.hpp"
#include "worker/task_process.hpp"

namespace fiber::detail {

class Supervisor {
 public:
  using Clock = std::chrono::steady_clock;

  // After its last activity an idle worker yields the core between looks this long before it
  // sleeps: the next chunk of a map usually comes within it. (Longer than the quiet after which
  // the master rings, Channel::kQuietBeforeRing.)
  static constexpr auto kSpinBeforeSleep = std::chrono::milliseconds(10);
  // Then it sleeps on its doorbell (wire/worker_doorbell.hpp) for 1/kNapFraction of the quiet
  // time, at most kIdleNap, between looks at MPI: a held or parked worker with nothing to do is
  // woken by the master's ring, and looks at MPI by itself about every kIdleNap (a ring lost, a
  // master gone).
  static constexpr int kNapFraction = 4;
  static constexpr auto kIdleNap = std::chrono::seconds(2);
  // While something is under way without the master (a send, a relay, a large body, a stand-in's
  // relayed body) or without a doorbell, it looks at least this often, and a parked one this often.
  static constexpr auto kIdlePoll = std::chrono::milliseconds(1);
  static constexpr auto kParkedPoll = std::chrono::milliseconds(25);
  // Bodies this small may join the ring while the task process is busy, if the ring has room
  // for them, up to this many chunks.
  static constexpr std::size_t kPipelinedBody = std::size_t{16} * 1024;
  static constexpr std::size_t kPipelinedChunks = 32;
  // Results up to kBatchedEntryBytes are batched, for at most this long.
  static constexpr auto kResultDelay = std::chrono::microseconds(50);
  // While its task process wrote within kRecentRecord the worker looks at the ring again at once;
  // after that it waits on the ring (the task process wakes it) between looks at MPI (and at
  // whether the task process died, and its deadlines) for 1/kRingWaitFraction of the quiet time,
  // at least kRingWait, at most kLongRingWait and half a heartbeat interval; once quiet for
  // kSpinBeforeSleep with a doorbell and nothing under way, it naps until something happens
  // (nap_while_task_runs; docs/design.md, "Idle workers sleep").
  static constexpr auto kRecentRecord = std::chrono::milliseconds(1);
  static constexpr auto kRingWait = std::chrono::microseconds(200);
  static constexpr auto kLongRingWait = std::chrono::milliseconds(100);
  static constexpr int kRingWaitFraction = 8;
  // A worker whose task runs naps this long at most the first time (nap_while_task_runs): a
  // message whose ring overtook it, and was taken for stale, is seen after it.
  static constexpr auto kFirstTaskNap = kSpinBeforeSleep;

  explicit Supervisor(MPI_Comm parent) : master_(parent), channel_(parent) {}

  // Serves until the master says shutdown.
  void serve();

 private:
  // --- the loop and the master's messages (supervisor.cpp) ---
  // The connection to the master broke (it died, or its node did): nobody is left to work for.
  // The task process goes too; the connection is not disconnected (that would wait forever).
  [[noreturn]] void lost_master();
  // Its node daemon died (daemon_watch.hpp): the worker leaves, its task process too.
  [[noreturn]] void lost_daemon();
  // The master asks, before a spawn, whether this worker's node lives: a heartbeat if its daemon
  // does, else the worker leaves.
  void answer_probe();
  // Handles the messages that have arrived, up to and including the first run message (its work
  // starts before the next test); true if there was one.
  bool take_messages();
  // This worker relays a broadcast from the master (dispatch/broadcast_routes.hpp): it forwards
  // the entry along its route, then runs it too.
  void relay(std::span<const char> body);
  // Forwards what relays sent here along its route and fills stand-ins with it; true if anything
  // came.
  bool take_relayed();
  // The pool was terminated: queued chunks come back cancelled, running ones are killed. A lent
  // task process is killed too: what it holds the master has cancelled.
  void drop_all();
  // No pool holds this worker: end the task process (and with it the tasks' memory and the
  // pool's initializer and broadcast state), give memory back, and sleep long between polls.
  void park();
  // Forks the standby task process (standby_) if one is wanted, and gives it the initializer
  // kept to run ahead, if any; whether it did.
  bool start_standby_if_wanted();
  // The first message of a pool that takes this parked worker: `keep` says that the initializer
  // its standby ran ahead is the pool's; else it is forgotten, with the task process that ran it.
  void taken_by_pool(bool keep);
  // Ends the task process that ran the kept initializer ahead (cancelling that run if it is not
  // done): a pool with another initializer, or a shape, needs a fresh one.
  void end_ran_ahead();
  // The result of the kept initializer's run ahead is not the master's: if it succeeded, the
  // worker says so (StandbyReady), so that a pool with the same initializer need not send it.
  void report_standby(const Bytes& result);
  // Waits for something to happen, nothing running here: polls, yields, then sleeps (on the
  // doorbell when nothing is under way without the master: `under_way`).
  void wait_idle(bool under_way);

  // --- the task process and chunks run here (supervisor_tasks.cpp) ---
  // Starts what it can of the queue; true if it started anything.
  bool start_queued();
  // Whether the task process has run the chunks of tasks its pool allows it (maxtasksperchild).
  bool lifetime_over(const RunHeader& header) const;
  bool fits_ring() const;
  // Starts a task process and replays in it what it must (for a lane being lent: what the master
  // did not write into that lane).
  void start_task_process(std::optional<std::uint64_t> lane = {});
  void send_to_child(std::span<const char> body, bool silent);
  // Takes in what the task process wrote and ends the chunks that are complete; handles its
  // death and deadlines. True if anything happened.
  bool progress_child();
  // How long progress_child() waits on the ring now.
  std::chrono::microseconds ring_wait() const;
  // Whether the worker may sleep until its task process answers instead of looking at MPI
  // between ring waits: it has a doorbell, has been quiet for kSpinBeforeSleep, and nothing is
  // under way with the master or its relays (the master rings for what it sends from then on).
  bool may_nap_while_task_runs();
  // The first call takes the stale rings (as wait_idle); later ones sleep until the task process
  // answers or dies, the master rings, a heartbeat is due, the front chunk's deadline passes or
  // kIdleNap passes (the first nap: kFirstTaskNap): a task of seconds costs its worker a few
  // wake-ups, not a look at MPI every eighth of its run time. True if the master rang.
  bool nap_while_task_runs();
  // Runs a chunk in this process (the pool does not isolate tasks).
  void run_here(const RunBody& run);
  // Results go out in batches: a small one waits for others for at most kResultDelay, a large
  // one goes at once, sent in place.
  void send_result(const std::shared_ptr<Bytes>& result);
  // While it has work, a worker says so at least as often as its chunk's pool asks: the master's
  // sign that it lives. A body still arriving from the master is work (the master counts the
  // silence from its send; hundreds of MB take seconds on a busy node).
  void send_heartbeat_if_due();

  // --- lending the task process (supervisor_lane.cpp) ---
  // The master asked for the task process (lane_open) and every chunk sent before is answered:
  // a task process is started if none runs (replaying what the master did not write into this
  // lane; answered next time), then its memory is lent. True if anything happened.
  bool open_lane();
  // Answers the master's lane_open for `lane` with why the task process cannot be lent; its
  // chunks keep coming through this worker.
  bool refuse_lane(std::uint64_t lane, std::string_view why);
  // The task process is the master's to feed: this worker sleeps until it dies, the master rings
  // or a nap passes (LentWatch), reports a death, and heartbeats when due.
  void watch_lent_process(bool mpi_busy);
  void report_lane_lost(const std::string& death);
  // The master saw an item of a lane run past its timeout: kill the task process, unless it has
  // moved on since.
  void kill_lent_process(std::span<const char> body);

  mpi::Intercomm master_;
  Channel channel_;
  mpi::Request request_;  // the receive from the master
  RelayLink relay_;       // to the other workers of this spawn
  RunQueue queue_;        // run entries received, not yet started
  // Sent to the task process, in its order; their results go to the master.
  TaskChunks chunks_{[this](std::shared_ptr<Bytes> result) { send_result(result); }};
  task_frames::AnswerReader answers_;  // from the task process, split into records
  Batch results_{MessageKind::result};
  Clock::time_point first_batched_;
  Replays replays_;  // the pool's initializer and broadcast calls, for new task processes
  TaskProcess process_;
  std::uint32_t tasks_in_process_ = 0;  // chunks of tasks sent to the running task process
  // The running task process was forked while this worker was parked and has been given nothing
  // since: the next pool's initializer goes to it instead of a new fork, which a parked worker's
  // reuse then does not wait for (a Python task process's fork and start took most of a reused
  // Pool()'s 6 ms). Forked once a parked worker is quiet (standby_wanted_), not at the park: a
  // pool that comes at once would wait for that fork instead.
  bool standby_ = false;
  bool standby_wanted_ = false;
  // The standby was given the initializer of the worker's last pool that runs ahead (kRunAhead,
  // kept in replays_ over the park): its chunk, until answered, and whether the running task
  // process ran it. The park messages had so far (StandbyReady says which park's standby it is).
  std::optional<std::uint64_t> ahead_chunk_;
  bool ran_ahead_ = false;
  std::uint64_t parks_ = 0;
  // Parked, and no pool has taken it since: the first message of one says what to keep.
  bool awaiting_pool_ = false;
  ItemRunner runner_;
  // Started by the first chunk run in this process (Isolation::none): heartbeats meanwhile.
  std::optional<BusyHeartbeat> busy_heartbeat_;
  Backoff backoff_{kSpinBeforeSleep, kIdlePoll};
  WorkerDoorbell doorbell_when_idle_;
  bool asleep_ = false;          // in its naps on the doorbell since the last activity
  std::uint32_t task_naps_ = 0;  // naps while its task runs since it fell asleep
  DaemonWatch daemon_;
  Clock::time_point last_sent_ = Clock::now();
  // How often to heartbeat while work is under way: the latest run's pool's; before any, the
  // default pool's.
  Clock::duration heartbeat_every_ = PoolOptions{}.worker_timeout / kHeartbeatsPerWorkerTimeout;
  // The lane the master asked for (lane_open), not lent yet, and how often to heartbeat once
  // lent.
  std::optional<std::uint64_t> lane_asked_;
  Clock::duration lane_heartbeat_{};
  // The lane lent: its task process is the master's to feed.
  struct LentLane {
    std::uint64_t id;
    LentWatch watch;
  };
  std::optional<LentLane> lent_;
  // Rung by the master while the task process is lent (made with the first lane).
  std::optional<LaneDoorbell> doorbell_;
  bool lane_replayed_ = false;  // a new task process replays for the lane asked for
  bool parked_ = false;
  bool stopping_ = false;
  bool disconnect_ = true;
};

}  // namespace fiber::detail
