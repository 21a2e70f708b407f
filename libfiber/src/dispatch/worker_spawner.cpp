#include "dispatch/worker_spawner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <utility>

#include "backoff.hpp"
#include "dispatch/spawn_resources.hpp"
#include "dispatch/spawn_watchdog.hpp"
#include "fiber/errors.hpp"
#include "id_list.hpp"
#include "launch_defaults.hpp"
#include "log.hpp"
#include "mpi/error.hpp"
#include "mpi/info.hpp"
#include "this_process.hpp"
#include "wire/messages.hpp"
#include "wire/worker_doorbell.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// How long a spawned worker may take to say hello before the spawn counts as failed.
constexpr auto kHelloTimeout = 120s;
// How the wait for the hello polls.
constexpr auto kHelloPoll = 1ms;

// Without oversubscription, the slots are checked first: after a spawn that failed for want of
// slots, Open MPI 4.1's mpirun never exits (docs/platform.md, "Slots and oversubscription"). (A
// singleton reports a universe of 1; there MPI itself says no.)
void check_free_slots(int first_id, int count, int live, const WorkerShape& shape) {
  auto free = WorkerSpawner::free_slots(live);
  const int each = slots_of(shape);
  if (!free || count * each <= *free) return;
  int slots = live + *free;
  if (each > 1) {
    throw SpawnError(fmt::format(
        "fiber: cannot start worker {}: a worker of {} takes {} slots, and the job has {} slots "
        "of which {} are taken (the master and its workers); ask for fewer processes or cores, "
        "or a larger allocation",
        first_id + std::max(0, *free / each), describe(shape), each, slots, live));
  }
  throw SpawnError(fmt::format(
      "fiber: cannot start worker {}: the job has {} slots and {} are taken (the master and its "
      "workers); ask for fewer processes, a larger allocation, or set FIBER_OVERSUBSCRIBE=1",
      first_id + std::max(0, *free), slots, live));
}

}  // namespace

std::optional<int> WorkerSpawner::free_slots(int live) {
  if (oversubscription_allowed()) return std::nullopt;
  int* universe = nullptr;
  int found = 0;
  mpi::check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &found),
             "MPI_Comm_get_attr");
  if (!found || *universe <= 1) return std::nullopt;
  return std::max(0, *universe - live);
}

WorkerSpawner::WorkerSpawner(std::vector<std::string> worker_argv, std::string worker_program)
    : worker_argv_(std::move(worker_argv)),
      executable_(worker_program.empty() ? std::filesystem::read_symlink("/proc/self/exe").string()
                                         : std::move(worker_program)) {}

std::vector<WorkerSpawner::Spawned> WorkerSpawner::spawn(int first_id, int count, int live,
                                                         const WorkerShape& shape) {
  check_free_slots(first_id, count, live, shape);
  check_spawn_resources(first_id, count, live);
  std::vector<char*> argv;
  for (const auto& argument : worker_argv_) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  mpi::Info info;
  if (oversubscription_allowed()) info.set("map_by", ":OVERSUBSCRIBE");
  // A worker bound to cores binds itself (worker_placement.hpp): Open MPI must not bind it to
  // one core first (its default for small jobs), so that it sees, and offers, its node's CPUs.
  if (shape.cores > 0) info.set("bind_to", "none");
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> spawn_errors(static_cast<std::size_t>(count), MPI_SUCCESS);
  int rc = MPI_SUCCESS;
  {
    SpawnWatchdog watchdog(workers_named(first_id, count), spawn_time_limit(count));
    rc = MPI_Comm_spawn(executable_.c_str(), argv.data(), count, info.get(), 0, MPI_COMM_SELF,
                        &comm, spawn_errors.data());
  }
  int spawn_error = MPI_SUCCESS;
  for (int error : spawn_errors) {
    if (error != MPI_SUCCESS) spawn_error = error;
  }
  if (rc != MPI_SUCCESS || spawn_error != MPI_SUCCESS) {
    throw SpawnError(fmt::format(
        "fiber: could not start worker {} ({}); {}", first_id,
        mpi::error_text(rc != MPI_SUCCESS ? rc : spawn_error),
        oversubscription_allowed()
            ? "check that the program exists on every node"
            : "the allocation has no free slot: ask for fewer processes, a larger allocation, "
              "or set FIBER_OVERSUBSCRIBE=1"));
  }
  auto group = std::make_shared<SpawnGroup>(comm);
  // An error on a worker's requests must come back as a return code (then it is that worker's
  // loss), not end the master (MPI's default handler).
  mpi::check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  std::vector<Spawned> spawned;
  for (int rank = 0; rank < count; ++rank) {
    spawned.push_back({std::make_unique<Worker>(group, rank), MPI_REQUEST_NULL});
    spawned.back().worker->channel.post_receive(&spawned.back().receive);
  }
  auto deadline = Clock::now() + kHelloTimeout;
  Backoff backoff(kHelloPoll, kHelloPoll);
  int reported = 0;
  while (reported < count) {
    bool any = false;
    for (int rank = 0; rank < count; ++rank) {
      auto& [worker, request] = spawned[static_cast<std::size_t>(rank)];
      if (worker->info.id >= 0) continue;  // said hello
      int arrived = 0;
      MPI_Status status;
      if (!worker->channel.failure()) {
        int test_rc = MPI_Test(&request, &arrived, &status);
        if (test_rc != MPI_SUCCESS) worker->channel.fail(mpi::error_text(test_rc));
      }
      if (auto failure = worker->channel.failure()) {
        group->comm.release();  // one may be gone: a disconnect could wait forever
        throw SpawnError(fmt::format("fiber: worker {} started but could not be reached: {}",
                                     first_id + rank, *failure));
      }
      if (!arrived) continue;
      any = true;
      auto hello = worker->channel.on_received(status, &request);
      if (!hello) continue;
      auto said = decode_message<Hello>(hello->body);
      worker->info.pid = static_cast<long>(said.pid);
      worker->info.host = std::move(said.host);
      worker->node = {worker->info.host, parse_id_list(said.cpus), parse_id_list(said.gpus)};
      worker->channel.ring_when_quiet(WorkerDoorbellRing::to(
          static_cast<std::uint16_t>(said.doorbell_port), said.doorbell_addresses,
          worker->info.host == this_process().host));
      worker->info.id = first_id + rank;
      worker->channel.post_receive(&request);
      ++reported;
    }
    if (reported == count) break;
    if (Clock::now() > deadline) {
      group->comm.release();
      throw SpawnError(
          fmt::format("fiber: {} of {} workers started from worker {} did not report "
                      "within {} s",
                      count - reported, count, first_id, seconds(kHelloTimeout)));
    }
    if (!any) backoff.pause();
  }
  for (auto& [worker, request] : spawned) worker->last_heard = Clock::now();
  log::debug("started workers {} to {} with one spawn", first_id, first_id + count - 1);
  return spawned;
}

}  // namespace fiber::detail
