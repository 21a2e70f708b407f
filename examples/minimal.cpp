#include <fiber/fiber.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <tuple>
#include <vector>

// One episode of a toy environment: `steps` coin flips from the random stream `seed`, a point
// for each head. Deterministic: the same seed gives the same return on every worker.
double rollout(std::uint64_t seed, int steps) {
  std::mt19937_64 coin(seed);
  double episode_return = 0;
  for (int step = 0; step < steps; ++step) episode_return += coin() % 2;
  return episode_return;
}
FIBER_TASK(rollout);  // registered by name: messages carry the name, never a pointer

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);  // first line of main; spawned workers serve tasks here
  fiber::Pool pool({.processes = 4});  // 4 workers: copies of this binary, started by MPI

  std::vector<std::tuple<std::uint64_t, int>> calls{{1, 1000}, {2, 1000}, {3, 1000}};
  std::vector<double> returns = pool.starmap(rollout, calls);  // ordered
  auto pending = pool.apply_async(rollout, 7, 1000);           // fiber::AsyncResult<double>
  double r = pending.get();                                    // rethrows a task's error
  double total = 0;
  for (double x : pool.imap_unordered(rollout, calls)) total += x;  // as each finishes

  std::printf("starmap: %g %g %g\n", returns[0], returns[1], returns[2]);
  std::printf("apply_async: %g\n", r);
  std::printf("imap_unordered, summed: %g\n", total);
}
