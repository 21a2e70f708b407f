#include "learner_task.hpp"

#include <sched.h>

#include <fiber/fiber.hpp>

#include <chrono>
#include <random>

#include "run/random_engine_text.hpp"

namespace fiber::ppo {

LearnerResult ppo_learn(LearnerTask task) {
  std::mt19937_64 rng;
  rl::set_engine(rng, task.rng);
  const auto started = std::chrono::steady_clock::now();
  LearnerResult result;
  result.report = ppo_update(task.model, task.adam, task.samples, task.settings, rng);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.rng = rl::engine_text(rng);
  result.model = std::move(task.model);
  result.adam = std::move(task.adam);
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (sched_getaffinity(0, sizeof cores, &cores) == 0) result.cores = CPU_COUNT(&cores);
  return result;
}

}  // namespace fiber::ppo

FIBER_TASK(fiber::ppo::ppo_learn);
