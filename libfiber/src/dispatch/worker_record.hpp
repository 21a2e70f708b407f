// What the master knows of one worker: its connection, which pool holds it, the chunks it was
// sent and not yet answered, and when it was last heard from.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/lane.hpp"
#include "dispatch/pool_handle.hpp"
#include "dispatch/scheduled_job.hpp"
#include "dispatch/worker_placement.hpp"
#include "fiber/pool.hpp"
#include "mpi/intercomm.hpp"
#include "wire/channel.hpp"

namespace fiber::detail {

// Items [first, first + count) of a job, sent to a worker as one chunk.
struct InFlight {
  std::uint64_t chunk_id;
  std::shared_ptr<ScheduledJob> job;
  std::shared_ptr<PoolHandle> pool;
  std::size_t first;
  std::size_t count;
};

// The workers started by one MPI_Comm_spawn share its intercommunicator (each is a rank of its
// remote group). It is disconnected as a whole ("A disconnect acts on a whole spawn"), once, at
// the end, and only if every member is still there to take part.
struct SpawnGroup {
  explicit SpawnGroup(MPI_Comm intercomm) : comm(intercomm) {}
  mpi::Intercomm comm;
};

struct Worker {
  Worker(std::shared_ptr<SpawnGroup> spawn_group, int rank)
      : group(std::move(spawn_group)), channel(group->comm.get(), rank) {}

  std::shared_ptr<SpawnGroup> group;
  Channel channel;
  WorkerInfo info;
  std::shared_ptr<PoolHandle> pool;  // none while parked (or lost)
  std::deque<InFlight> in_flight;
  Clock::time_point last_result{};  // when it last answered: a busy worker gets no prefetch
  Clock::time_point last_heard{};   // any message: a silent busy worker is taken for dead
  Clock::time_point idle_since{};   // for autoscaling down
  bool parked = false;
  bool busy = false;  // counted among the worker set's workers with chunks in flight
  bool dead = false;  // taken for lost: in no pool, sent nothing, but still listened to
  // Its channel failed (an MPI error on its requests: it died mid-message, its connection
  // broke): lost for good, never listened to again, released without a disconnect at the end.
  bool unreachable = false;
  // Results of chunks sent before it was taken for lost (re-sent elsewhere) are ignored.
  std::uint64_t stale_chunks_below = 0;
  // Its task process, reached by the master itself (asked for, or lent): its chunks go there.
  std::unique_ptr<Lane> lane;
  bool lane_refused = false;  // it could not lend one: its chunks go through it
  // Standby task processes (docs/design.md, "Standby task processes"): the initializer that runs
  // ahead (PoolOptions::initializer_runs_ahead) of its last pool, which it keeps over its parks;
  // the park messages sent to it; whether the standby of its latest park said that it ran that
  // initializer again (StandbyReady): a pool with the same one then only says `keep`.
  std::shared_ptr<const Call> kept_initializer;
  std::uint64_t parks = 0;
  bool standby_ready = false;
  // What its node offers shaped workers (its hello); the shape it was spawned for (unbound if it
  // has cores); the shape it serves: it goes only to pools of that one, its own or a wider one
  // it was re-shaped to; what a pool's shape gave it while a pool holds it (a parked worker holds
  // nothing).
  NodeOffer node;
  WorkerShape spawned_as;
  WorkerShape shape;
  Placement placement;
  // Slots lent to a wider shape (docs/design.md, "Parked workers lend their slots"): the parked
  // workers of its node whose slots it holds besides its own, while it serves a wider shape; the
  // worker a parked one lends its slots to (it stays parked and asleep, and no pool takes it).
  std::vector<int> lenders;
  std::optional<int> lending_to;
};

// A duration in seconds, for messages about workers (a silence, a wait for a hello).
inline double seconds(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

// "worker 3 on node2, pid 1234": which worker a message is about.
inline std::string where(const WorkerInfo& worker) {
  return fmt::format("worker {} on {}, pid {}", worker.id, worker.host, worker.pid);
}

}  // namespace fiber::detail
