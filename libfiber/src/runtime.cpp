#include "fiber/runtime.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "launch_defaults.hpp"
#include "log.hpp"
#include "mpi/error.hpp"
#include "queue/feeder.hpp"
#include "reduction/partial_store.hpp"
#include "run_identity.hpp"
#include "runtime_state.hpp"
#include "this_process.hpp"
#include "trace/hop_trace.hpp"
#include "worker/worker.hpp"

namespace fiber {
namespace {

detail::RuntimeState* live_state = nullptr;

int slots_for_workers() {
  if (detail::runs_locally()) {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  int* universe = nullptr;
  int found = 0;
  mpi::check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &found),
             "MPI_Comm_get_attr");
  int world = 1;
  mpi::check(MPI_Comm_size(MPI_COMM_WORLD, &world), "MPI_Comm_size");
  return found && universe && *universe > world ? *universe - world : 1;
}

}  // namespace

namespace detail {
RuntimeState& runtime_state() {
  if (!live_state) {
    throw Error("fiber: no fiber::Runtime is live; construct one first in main");
  }
  return *live_state;
}
bool runtime_live() { return live_state != nullptr; }
}  // namespace detail

Runtime::Runtime(int argc, char** argv) : Runtime(argc, argv, RuntimeOptions{}) {}

Runtime::Runtime(int argc, char** argv, const RuntimeOptions& options) {
  if (live_state) throw Error("fiber: a fiber::Runtime already exists in this process");
  // MPI starts once per process: MPI_Init after MPI_Finalize aborts the process.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    throw Error(
        "fiber: a fiber::Runtime cannot start again in a process whose runtime has ended (MPI "
        "starts once per process); keep one Runtime for the whole of main");
  }
  detail::apply_launch_defaults();
  int provided = 0;
  // Between these two, every MPI call is made in the dispatcher's rounds, one thread at a time
  // (the progress lock): MPI_THREAD_SERIALIZED is enough.
  if (int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided); rc != MPI_SUCCESS) {
    log::error("MPI could not start: {}", mpi::error_text(rc));
    std::exit(1);
  }
  // Errors come back as codes from here on (checked below), not as MPI's abort of the job.
  mpi::check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  mpi::check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  MPI_Comm parent = MPI_COMM_NULL;
  mpi::check(MPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
  if (parent != MPI_COMM_NULL) {
    log::debug("worker process {} on {} serves its master", detail::this_process().pid,
               detail::this_process().host);
    detail::serve_as_worker(parent);  // does not return
  }

  if (provided < MPI_THREAD_SERIALIZED) {
    log::error("this MPI library does not support MPI_THREAD_SERIALIZED");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int world_size = 1, world_rank = 0;
  mpi::check(MPI_Comm_size(MPI_COMM_WORLD, &world_size), "MPI_Comm_size");
  mpi::check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
  if (world_size > 1) {
    if (world_rank == 0) {
      log::error(
          "started as {} processes; start one (mpirun -n 1, or fiberrun): it spawns its workers",
          world_size);
    }
    MPI_Finalize();
    std::exit(2);
  }
  log::report_rejected_level();
  // The master's host and pid, read before the dispatcher starts, name the run.
  detail::set_run_identity(detail::this_process().host + "-" +
                           std::to_string(detail::this_process().pid));
  detail::unlink_stale_node_arrays();
  detail::partial_store::remove_stale();
  auto worker_argv = options.worker_arguments.value_or(
      std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
  live_state = new detail::RuntimeState{
      std::make_unique<detail::Dispatcher>(worker_argv, options.worker_program),
      slots_for_workers()};
  log::debug("master process {} on {} started; {} slots for workers", detail::this_process().pid,
             detail::this_process().host, live_state->default_pool_size);
}

Runtime::~Runtime() {
  detail::Feeder::stop_this_process();  // the master's puts reach its broker before it stops
  {
    std::lock_guard lock(live_state->queue_broker_mutex);  // a Process's end may be telling it
    live_state->queue_broker.reset();  // its waiting requests fail: nothing blocks the shutdown
  }
  live_state->dispatcher.reset();  // shuts the workers down; they remove their nodes' arrays
  detail::unlink_node_arrays();
  detail::partial_store::remove_all_of_run();
  delete live_state;
  live_state = nullptr;
  MPI_Finalize();
  detail::hop_trace::write();
  log::debug("master process {} ended its runtime", detail::this_process().pid);
}

int Runtime::worker_count() const { return live_state->dispatcher->worker_count(); }

int Runtime::default_pool_size() const { return live_state->default_pool_size; }

const WorkerInfo& this_worker() { return detail::this_process(); }

}  // namespace fiber
