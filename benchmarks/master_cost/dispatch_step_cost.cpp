// What one step of the dispatcher costs while every worker is busy and work is queued (the state
// of a long map between answers): a poll where nothing arrived, then a dispatch where nobody can
// take more. Worker records whose channels lead back to this process (a duplicate of
// MPI_COMM_SELF each, as in tests/dispatch/scheduling_test) stand in for the workers, so that no
// worker process takes the cores; CPU time of the process per poll and per dispatch (the poll's
// MPI_Testsome over n receives is the part that still grows with n, testsome_cost times it
// alone). One CSV line per n:
//
//   workers,ns_per_poll,ns_per_dispatch
//
//   ./dispatch_step_cost [--workers 4,8,...]   (directly, or under mpirun -n 1)
#include <mpi.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "command_line.hpp"
#include "cpu_time.hpp"
#include "dispatch/scheduler.hpp"
#include "dispatch/worker_set.hpp"
#include "plain_mpi.hpp"
#include "self_workers.hpp"

namespace {

using fiber::detail::Clock;

constexpr int kSteps = 20'000;
constexpr std::size_t kQueuedItems = 1'000'000;
// Later than any answer could count as recent: nobody takes chunks in advance.
constexpr auto kLater = std::chrono::seconds(1);

using fiber_benchmarks::process_cpu_seconds;

std::shared_ptr<fiber::detail::Job> queued_job() {
  std::vector<std::uint64_t> offsets(kQueuedItems + 1);
  for (std::size_t i = 0; i <= kQueuedItems; ++i) offsets[i] = i;
  return std::make_shared<fiber::detail::Job>("task", fiber::Bytes(kQueuedItems, 'x'),
                                              std::move(offsets), 1);
}

struct StepCost {
  double poll_ns = 0;
  double dispatch_ns = 0;
};

StepCost cost_per_step(int worker_count) {
  using namespace fiber::detail;
  WorkerSet workers{WorkerSpawner({})};
  Scheduler scheduler{workers};
  auto pool = std::make_shared<PoolHandle>(fiber::PoolOptions{.processes = worker_count});
  std::vector<std::shared_ptr<PoolHandle>> pools{pool};
  for (int i = 0; i < worker_count; ++i) {
    self_workers::adopt(workers, /*post_receive=*/true);  // so that the poll tests it
    workers.join(pool);
  }
  scheduler.enqueue(*pool, queued_job());
  auto now = Clock::now();
  scheduler.dispatch(pools, now);  // one chunk each: every worker busy from now on
  auto ignore = [](int, Message&) {};
  workers.poll(now, ignore);  // (the chunks, sent to this process, arrive here once)
  StepCost cost;
  double start = process_cpu_seconds();
  for (int step = 0; step < kSteps; ++step) workers.poll(now + kLater, ignore);
  cost.poll_ns = (process_cpu_seconds() - start) * 1e9 / kSteps;
  start = process_cpu_seconds();
  for (int step = 0; step < kSteps; ++step) scheduler.dispatch(pools, now + kLater);
  cost.dispatch_ns = (process_cpu_seconds() - start) * 1e9 / kSteps;
  scheduler.terminate(*pool);
  self_workers::drain(workers);
  return cost;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("What a dispatcher step costs with n busy workers", "dispatch_step_cost");
  std::vector<int> worker_counts{4, 8, 16, 32, 64, 128, 256, 512, 1024};
  app.add_option("--workers", worker_counts, "numbers of workers")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  fiber_benchmarks::set_fiber_mpi_defaults();  // the transport a master uses
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  std::printf("workers,ns_per_poll,ns_per_dispatch\n");
  for (int workers : worker_counts) {
    StepCost cost = cost_per_step(workers);
    std::printf("%d,%.1f,%.1f\n", workers, cost.poll_ns, cost.dispatch_ns);
  }
  MPI_Finalize();
  return 0;
}
