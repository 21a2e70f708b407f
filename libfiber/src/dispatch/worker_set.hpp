// Every worker the master started, and the MPI traffic with them: obtaining workers (parked ones
// first, else the spawner), lending them to pools and parking them, sending chunks, listening to
// all of them at once (a request pool: one MPI_Testsome), telling when one went silent or its
// connection failed, and shutting them down. It knows nothing of how work is scheduled: the
// scheduler decides what goes where, this part moves the bytes. What it does per message costs
// the same however many workers there are: it lists a pool's workers that became idle or answered
// (PoolHandle::idle, answered) for the scheduler, and follows only the sends still in flight.
// The chunks of a worker on the master's host whose pool isolates tasks go through a lane
// (lane.hpp): written into its task process's memory, answered there, with no MPI message.
//
// One class, its parts in files by job: worker_set.cpp (membership: obtaining, lending, parking,
// the end), worker_set_lending.cpp (parked workers' slots lent to a wider shape),
// worker_set_sending.cpp (chunks), worker_set_broadcast.cpp (broadcasts and relays),
// worker_set_polling.cpp (receiving, sends in flight), worker_set_losses.cpp (failed and silent
// workers, and the question to the other nodes before a spawn), worker_set_lanes.cpp (lanes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatch/silence_queue.hpp"
#include "dispatch/silence_watch.hpp"
#include "dispatch/worker_queue.hpp"
#include "dispatch/worker_record.hpp"
#include "dispatch/worker_spawner.hpp"
#include "mpi/request_pool.hpp"
#include "posix/futex.hpp"
#include "wire/channel.hpp"
#include "wire/entry_list.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {

class WorkerSet {
 public:
  explicit WorkerSet(WorkerSpawner spawner);

  Worker& operator[](int id) { return *workers_[static_cast<std::size_t>(id)]; }
  const std::vector<std::unique_ptr<Worker>>& all() const { return workers_; }
  int count() const { return count_.load(); }
  int parked_count() const { return parked_count_.load(); }
  // How many parked workers serve `shape` and lend their slots to none
  // (worker_set_lending.cpp).
  int parked_serving(const WorkerShape& shape) const;

  // Makes `count` workers of `shape` parked: parked ones of the shape, then parked ones given
  // back their slots or lending them (worker_set_lending.cpp), spawning those still missing with
  // one spawn, or as many as the slots take (fiber::SpawnError if none can start, while a node
  // may be lost: node_in_doubt() or ask_other_nodes(), or if a new worker's node cannot hold its
  // shape: worker_placement.hpp).
  void make_available(int count, const WorkerShape& shape = {});
  // A worker of `pool`'s shape for it, a parked one else a new one, given what the shape needs
  // of its node's cores and devices that no worker a pool holds there has (worker_placement.hpp;
  // told by a second Welcome). fiber::SpawnError if none can start or no such worker's node has
  // what the shape needs free, naming what is missing.
  int join(const std::shared_ptr<PoolHandle>& pool);
  // Takes a started worker (the spawner's) into the set, parked; its id.
  int adopt(WorkerSpawner::Spawned spawned);

  // --- standby task processes (worker_set_standby.cpp) ---
  // Worker `id` joins `pool`: true if its standby ran the pool's initializer ahead already (the
  // same bytes, StandbyReady since its latest park), and then tells it to keep it (MessageKind::
  // keep) instead of the initializer being sent; the worker keeps the pool's initializer that
  // runs ahead, if any, from now on.
  bool keeps_initializer(int id, const PoolHandle& pool);

  // Asks worker `id`, which `pool` just took, for its lane at once if the pool's chunks to it go
  // through one, so that the first call finds it lent (the worker lends it once what was sent
  // before, an initializer, is answered).
  void open_lane_early(int id, const PoolHandle& pool);

  // Takes a worker from its pool; it parks once its chunks in flight are answered.
  void leave_pool(int id);
  void park_if_drained(int id);

  // Every message to a worker goes through the worker set (send_chunk or send), so that its send is
  // followed to completion.
  void send(int id, MessageKind kind);
  // Sends the batch's entries to worker `id` as one message, if there are any.
  void send(int id, Batch& batch);
  // Sends items [first, first + count) of `job` to worker `id` as one chunk; a small one joins
  // `batch` when given (sent by the caller with send()).
  void send_chunk(int id, const std::shared_ptr<PoolHandle>& pool,
                  const std::shared_ptr<ScheduledJob>& job, std::size_t first, std::size_t count,
                  std::uint32_t flags, Batch* batch, Clock::time_point now);
  // Sends a broadcast to every worker of `pool`, `jobs[i]` (one item each, all with the same
  // arguments) to `pool->workers[i]`: a large one once per node group, through a relay
  // (broadcast_routes.hpp). If a relay is lost, lose() sends its siblings what they still wait
  // for.
  void send_broadcast(const std::shared_ptr<PoolHandle>& pool,
                      const std::vector<std::shared_ptr<ScheduledJob>>& jobs,
                      Clock::time_point now);

  // Takes every message that arrived: `on_message(id, message)` for each, from workers not lost
  // for good. A message that is not of the protocol (ProtocolError, from the channel or from
  // on_message) fails that worker's channel; anything else on_message throws comes back after
  // every arrived message was taken. True if anything arrived.
  bool poll(Clock::time_point now, const std::function<void(int, Message&)>& on_message);
  // After a poll that took nothing: whether what the master waits for can only come from the
  // lanes' task processes (every worker with chunks in flight lent its lane, every frame is
  // written, no send is in flight, no answer waits), so that it may sleep until one answers
  // rather than poll. Then `watches` holds the lanes' answer words, whose flags are raised until
  // lanes_awake(). MPI may bring a rare word meanwhile (a death, a heartbeat): the sleep's bound
  // keeps it waiting at most that long.
  bool lanes_may_sleep(std::vector<posix::FutexWatch>& watches);
  void lanes_awake();
  // Worker `id` was heard from (a result may have taken chunks off it): lists it in its pool's
  // answered list, and in its idle list if it holds nothing now. poll() calls it for every
  // message it takes (a test that answers chunks by hand calls it too).
  void heard_from(int id);
  // Workers whose channel failed since the last call, each once (they are unreachable now).
  std::vector<int> newly_unreachable();
  // Busy workers of isolated pools silent for longer than the silence watch allows, looked for at
  // most every kSilenceCheckPeriod (at the front of the silence queue), and idle ones that did
  // not answer before a spawn (ask_other_nodes): (id, why) of each.
  std::vector<std::pair<int, std::string>> newly_silent(Clock::time_point now);

  // Takes worker `id` for lost: it is sent nothing more; returns the chunks it held. On another
  // node than the master's, nothing is spawned until a worker there is heard again.
  std::deque<InFlight> lose(int id);
  // A worker taken for lost answered again: it drops what it held and waits parked for reuse.
  void revive(int id);
  // A node but the master's where a worker was lost and none was heard since, if any: it may be
  // lost, and a spawn would then end the whole job (make_available refuses to spawn meanwhile).
  std::optional<std::string> node_in_doubt();
  // Cuts every worker's chunks off (dropped on the workers, their answers ignored): the chunks.
  std::vector<InFlight> abandon_in_flight();

  bool any_in_flight() const { return busy_ > 0; }
  // Asks every worker to stop and disconnects from it (once their chunks were answered or
  // dropped); no worker is left afterwards.
  void shut_down();
  // Forgets every worker without waiting for anything (after shut_down failed: a disconnect
  // could wait forever on a broken connection).
  void forget();

  std::uint64_t next_chunk_id() const { return next_chunk_id_; }

  // How long a node's workers have to answer before a spawn (ask_other_nodes) if none of them is
  // busy: longer than an idle worker's longest sleep between looks at MPI (Supervisor::kIdleNap,
  // 2 s), so that it answers even if its ring was lost, with as much again for a loaded node.
  static constexpr auto kNodeAnswerTimeout = std::chrono::seconds(5);
  // How the wait for their answers polls.
  static constexpr auto kNodeAnswerPoll = std::chrono::milliseconds(1);
  // How often silent workers are looked for.
  static constexpr auto kSilenceCheckPeriod = std::chrono::milliseconds(100);
  // A gap longer than this between two looks means the dispatcher itself did not run (a long
  // spawn, an overloaded node): nobody was listened to meanwhile, so that time is nobody's
  // silence.
  static constexpr auto kDispatcherStall = std::chrono::seconds(1);

 private:
  // --- slots lent to a wider shape (worker_set_lending.cpp) ---
  // How many of the job's slots `worker` holds: its own and its lenders' (none if it lends them,
  // or is lost).
  int slots_held(const Worker& worker) const;
  // Gives parked workers re-shaped for another shape back their own shape, and their lenders
  // theirs, until `wanted` more serve `shape` or none is left to give back.
  void take_back_lent_slots(const WorkerShape& shape, int wanted);
  // Re-shapes up to `wanted` parked workers of narrower shapes to `shape` (only shapes with
  // cores), each with parked workers of its node lending it the slots it lacks.
  void lend_slots_to(const WorkerShape& shape, int wanted);
  // Worker `id` serves its own shape again; its lenders are parked workers of theirs again.
  void give_back_slots(int id);

  // What `shape` needs of `worker`'s node, if the node has it free (else `missing` says why).
  std::optional<Placement> place_on_its_node(const Worker& worker, const WorkerShape& shape,
                                             std::string& missing) const;
  // A sibling's stand-in for a relayed broadcast: its chunk id, still unanswered while it waits.
  struct RelayedChunk {
    int sibling;
    std::uint64_t chunk_id;
  };
  // A chunk's header: its pool says whether it runs in the task process, the default timeout and
  // how often a worker running it says it lives.
  static RunHeader run_header(const PoolHandle& pool, const JobState& job, std::uint64_t chunk_id,
                              std::uint32_t name_size, std::uint32_t count, std::uint32_t flags);
  // How often, in ms, a worker of `pool` says it lives while it has work.
  static std::uint32_t heartbeat_ms(const PoolHandle& pool);
  // Sends one run entry (a list of one for `run`; after `prefix` for `relay`) under `chunk_id`.
  void send_entry(Worker& worker, MessageKind kind, std::span<const char> prefix,
                  const PoolHandle& pool, const ScheduledJob& job, std::size_t first,
                  std::size_t count, std::uint32_t flags, std::uint64_t chunk_id, Batch* batch);
  void send_stand_in(Worker& worker, const PoolHandle& pool, const ScheduledJob& job,
                     std::uint64_t chunk_id, std::uint64_t relay_chunk);
  void add_in_flight(Worker& worker, InFlight chunk, Clock::time_point now);
  bool holds(const RelayedChunk& chunk) const;
  // A relay was lost: the workers its route reaches that still wait get the body from the master.
  void fall_back_from_relay(int relay);
  // Takes the message of a completed receive from worker `id`: on_message, unless it is lost for
  // good; a message fiber cannot read fails its channel.
  void receive(int id, const MPI_Status& status,
               const std::function<void(int, Message&)>& on_message, Clock::time_point now);
  // Takes the messages of the receives that completed: on_message, then heard_from, for each;
  // the first exception on_message throws is left in `failure` (every message is taken). How many
  // completed (MPI_UNDEFINED: no receive is active).
  int take_arrived(Clock::time_point now, const std::function<void(int, Message&)>& on_message,
                   std::exception_ptr& failure);
  // Hands over the messages held while ask_other_nodes() waited, as take_arrived() does; whether
  // there were any.
  bool deliver_held(const std::function<void(int, Message&)>& on_message,
                    std::exception_ptr& failure);
  // Before a spawn: a spawn after a node daemon's end ends the whole job, and idle workers say
  // nothing, so every live worker on another node than the master's is asked to answer (a probe,
  // answered with a heartbeat; a worker whose daemon is gone leaves instead). Waits until a worker
  // of each such node has been heard since, at most kNodeAnswerTimeout (or, for a node with busy
  // workers, the longest worker_timeout of their pools, since an Isolation::none worker answers
  // only with its next heartbeat). A node none answers is put in doubt and its workers that hold
  // no work are taken for lost (newly_silent); returns it. Nothing is sent if every worker is on
  // the master's node. What arrives meanwhile is held for the next poll().
  std::optional<std::string> ask_other_nodes();
  // Takes a parked worker out of the parked ones (it is lost).
  void unpark(int id);
  // Completes what it can of the sends in flight (only workers with sends left are looked at).
  void progress_sends();
  // Watches worker `id`'s silence if it is busy in an isolated pool, else no more.
  void watch_silence(int id);
  // --- lanes ---
  // Whether `pool`'s chunks to `worker` go through a lane: it has one, or it is on the master's
  // host, the pool isolates tasks and does not replace task processes (maxtasksperchild), and
  // lanes work here.
  bool lane_fits(const Worker& worker, const PoolHandle& pool) const;
  // Makes the worker's lane, not lent yet, and sends the worker LaneOpen.
  void ask_for_lane(Worker& worker, const PoolHandle& pool, std::uint32_t heartbeat_ms);
  // Sends a chunk's run entry into the worker's lane, asking for one first if it has none.
  void send_to_lane(Worker& worker, const PoolHandle& pool, const RunEntryParts& entry);
  // A parked worker's standby ran its kept initializer (MessageKind::standby).
  void on_standby(Worker& worker, const Message& message);
  // What the worker says of its lane (MessageKind::lane, lane_lost).
  void on_lane_message(Worker& worker, const Message& message, Clock::time_point now);
  // Writes into the lanes and takes their answers; true if anything moved. Counts in `lent_busy`
  // the lent lanes with chunks in flight.
  bool progress_lanes(Clock::time_point now, int& lent_busy);
  // Whether this round may leave MPI alone (see kLanedMpiLook in worker_set.cpp).
  bool mpi_can_wait(int lent_busy, Clock::time_point now) const;
  // Hands the results the lanes made to on_message, as result messages of their workers.
  void deliver_lane_results(const std::function<void(int, Message&)>& on_message);
  // The worker's lane is no more; what it held is the caller's to end.
  void close_lane(Worker& worker);

  WorkerSpawner spawner_;
  std::vector<std::unique_ptr<Worker>> workers_;  // index = worker id
  mpi::RequestPool receives_;                     // index = worker id
  std::vector<int> parked_;                       // ids of workers no pool holds
  WorkerQueue sending_;                           // workers whose sends may be in flight
  int busy_ = 0;                                  // workers with chunks in flight
  SilenceWatch silence_;
  SilenceQueue silent_order_;  // the workers whose silence is watched
  Clock::time_point last_silence_check_{};
  std::uint64_t next_chunk_id_ = 1;
  std::uint64_t failures_seen_ = 0;  // Channel::failures_so_far() at the last look
  std::vector<std::uint64_t> scratch_offsets_;
  std::unordered_map<int, std::vector<RelayedChunk>> relayed_by_;  // relay id -> stand-ins
  std::string master_host_;                                        // where lanes can go
  // When a worker was last lost on each node but the master's, until a worker there is heard
  // after it: meanwhile the node may be lost, and a spawn would end the whole job
  // (docs/platform.md, "A lost node forbids spawns").
  std::map<std::string, Clock::time_point> node_in_doubt_since_;
  // Messages that arrived while ask_other_nodes() waited, for poll() to hand over.
  std::vector<std::pair<int, Message>> held_messages_;
  // Idle workers that did not answer ask_other_nodes(), for newly_silent(): (id, why).
  std::vector<std::pair<int, std::string>> unanswered_;
  bool lanes_ = true;  // off with FIBER_LANES=0, or once a lane could not be mapped here
  std::uint64_t next_lane_id_ = 1;
  std::vector<int> laned_;             // workers with a lane
  Clock::time_point last_mpi_look_{};  // the last MPI_Testsome of poll()
  // Results the lanes made, for poll() to hand over: (worker id, result entry).
  std::vector<std::pair<int, std::shared_ptr<Bytes>>> lane_results_;
  std::atomic<int> count_{0};
  std::atomic<int> parked_count_{0};
};

}  // namespace fiber::detail
