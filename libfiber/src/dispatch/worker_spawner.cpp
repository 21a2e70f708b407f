#include "dispatch/worker_spawner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <utility>

#include "backoff.hpp"
#include "fiber/errors.hpp"
#include "launch_defaults.hpp"
#include "mpi/error.hpp"
#include "mpi/info.hpp"
#include "run_identity.hpp"

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
void check_free_slot(int id, int live) {
  if (oversubscription_allowed()) return;
  int* universe = nullptr;
  int found = 0;
  mpi::check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &found),
             "MPI_Comm_get_attr");
  if (found && *universe > 1 && live + 1 > *universe) {
    throw SpawnError(fmt::format(
        "fiber: cannot start worker {}: the job has {} slots and {} are taken (the master and {} "
        "workers); ask for fewer processes, a larger allocation, or set FIBER_OVERSUBSCRIBE=1",
        id, *universe, live, live - 1));
  }
}

}  // namespace

WorkerSpawner::WorkerSpawner(std::vector<std::string> worker_argv)
    : worker_argv_(std::move(worker_argv)),
      executable_(std::filesystem::read_symlink("/proc/self/exe").string()) {}

WorkerSpawner::Spawned WorkerSpawner::spawn(int id, int live) {
  check_free_slot(id, live);
  std::vector<char*> argv;
  for (const auto& argument : worker_argv_) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  mpi::Info info;
  if (oversubscription_allowed()) info.set("map_by", ":OVERSUBSCRIBE");
  MPI_Comm comm = MPI_COMM_NULL;
  int spawn_error = MPI_SUCCESS;
  int rc = MPI_Comm_spawn(executable_.c_str(), argv.data(), 1, info.get(), 0, MPI_COMM_SELF, &comm,
                          &spawn_error);
  if (rc != MPI_SUCCESS || spawn_error != MPI_SUCCESS) {
    throw SpawnError(fmt::format(
        "fiber: could not start worker {} ({}); {}", id,
        mpi::error_text(rc != MPI_SUCCESS ? rc : spawn_error),
        oversubscription_allowed()
            ? "check that the program exists on every node"
            : "the allocation has no free slot: ask for fewer processes, a larger allocation, "
              "or set FIBER_OVERSUBSCRIBE=1"));
  }
  auto worker = std::make_unique<Worker>(comm);
  // An error on this worker's requests must come back as a return code (then it is this worker's
  // loss), not end the master (MPI's default handler).
  mpi::check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Request request = MPI_REQUEST_NULL;
  worker->channel.post_receive(&request);
  auto deadline = Clock::now() + kHelloTimeout;
  Backoff backoff(kHelloPoll, kHelloPoll);
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    if (!worker->channel.failure()) {
      int test_rc = MPI_Test(&request, &arrived, &status);
      if (test_rc != MPI_SUCCESS) worker->channel.fail(mpi::error_text(test_rc));
    }
    if (auto failure = worker->channel.failure()) {
      worker->comm.release();  // it may be gone: a disconnect could wait forever
      throw SpawnError(
          fmt::format("fiber: worker {} started but could not be reached: {}", id, *failure));
    }
    if (arrived) {
      auto hello = worker->channel.on_received(status, &request);
      if (hello) {
        BodyReader reader(hello->body);
        worker->info.pid = static_cast<long>(reader.raw<std::int64_t>());
        worker->info.host = reader.string();
        worker->info.id = id;
        break;
      }
      continue;
    }
    if (Clock::now() > deadline) {
      throw SpawnError(fmt::format("fiber: worker {} started but did not report within {} s", id,
                                   seconds(kHelloTimeout)));
    }
    backoff.pause();
  }
  Bytes welcome;
  append_raw(welcome, static_cast<std::int32_t>(id));
  append_string(welcome, run_identity());
  worker->channel.send(MessageKind::welcome, {welcome});
  worker->channel.post_receive(&request);
  worker->last_heard = Clock::now();
  return {std::move(worker), request};
}

}  // namespace fiber::detail
