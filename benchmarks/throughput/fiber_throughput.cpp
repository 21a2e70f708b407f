// Throughput of empty tasks on fiber pools of 1, 2 and 4 workers: Pool::map at chunksize 1 and at
// automatic chunks, and the loop of the Fiber paper's benchmark (rounds of one apply_async per
// worker, then get() on all of them); with tasks in the worker processes (fiber-inline,
// Isolation::none) and in their task processes (fiber, the default). Each measurement is the best
// of 3; one CSV line each on stdout, a human line on stderr:
//
//   framework,mode,workers,chunksize,tasks,seconds,tasks_per_second
//
//   ./fiber_throughput [--quick] [--tasks N]   (--help says more)
//
// Run it directly: fiber::Runtime sets the MPI defaults this machine needs (no mpirun).
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

// The task: nothing but the round trip of an int, so the measurement is fiber's own overhead.
int empty(int x) { return x; }
FIBER_TASK(empty);

namespace {

constexpr int kWorkerCounts[] = {1, 2, 4};
constexpr int kRepeats = 3;
constexpr std::size_t kWarmUpTasks = 1000;

// Tasks per measurement, chosen so that each takes roughly 0.3-2 s here (2 cores, shared).
struct Sizes {
  std::size_t chunked = 2'000'000;   // map with automatic chunks: ~0.1 us per task
  std::size_t single = 200'000;      // map at chunksize 1: one message per task, ~2-5 us
  std::size_t apply_async = 20'000;  // one round trip per round of `workers` tasks, ~20-50 us
};

constexpr const char* kUsage =
    "usage: fiber_throughput [--quick] [--tasks N]\n"
    "  --quick    a tenth of the default tasks per measurement\n"
    "  --tasks N  N tasks for every measurement\n";

// A bad command line; main prints it with the usage and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::size_t positive(const char* flag, const char* text) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (!*text || *end || value == 0 || text[0] == '-') {
    throw UsageError(std::string(flag) + " needs a positive whole number, not '" + text + "'");
  }
  return value;
}

struct Options {
  Sizes sizes;
  bool help = false;
};

Options parse_options(int argc, char** argv) {
  Options options;
  std::optional<std::size_t> tasks;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      options.help = true;
    } else if (flag == "--quick") {
      options.sizes = {.chunked = 200'000, .single = 20'000, .apply_async = 2'000};
    } else if (flag == "--tasks" && i + 1 < argc) {
      tasks = positive("--tasks", argv[++i]);
    } else {
      throw UsageError("unknown or incomplete option '" + flag + "'");
    }
  }
  if (tasks) options.sizes = {.chunked = *tasks, .single = *tasks, .apply_async = *tasks};
  return options;
}

[[noreturn]] void wrong_result(const char* mode) {
  throw std::runtime_error(std::string(mode) + " returned a wrong result");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of kRepeats runs: the machine is shared, the minimum is the least disturbed one.
template <class Run>
double best_seconds(Run run) {
  double best = run();
  for (int i = 1; i < kRepeats; ++i) best = std::min(best, run());
  return best;
}

// The framework column: "fiber" for the default pool (tasks in a task process per worker,
// crashes contained), "fiber-inline" for Isolation::none (tasks in the worker process itself).
const char* framework = "fiber";

void report(const char* mode, int workers, std::size_t chunksize, std::size_t tasks,
            double seconds) {
  double per_second = static_cast<double>(tasks) / seconds;
  std::printf("%s,%s,%d,%zu,%zu,%.6f,%.1f\n", framework, mode, workers, chunksize, tasks, seconds,
              per_second);
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "%-12s %-11s workers %d chunksize %-4s %8zu tasks %7.3f s %10.0f tasks/s %7.2f us/task\n",
      framework, mode, workers, chunksize ? std::to_string(chunksize).c_str() : "auto", tasks,
      seconds, per_second, 1e6 / per_second);
}

std::vector<int> numbers(std::size_t count) {
  std::vector<int> items(count);
  std::iota(items.begin(), items.end(), 0);
  return items;
}

void measure_map(fiber::Pool& pool, int workers, std::size_t chunksize, std::size_t tasks) {
  const std::vector<int> items = numbers(tasks);
  if (pool.map(empty, numbers(kWarmUpTasks), chunksize) != numbers(kWarmUpTasks)) {
    wrong_result("map");
  }
  double seconds = best_seconds([&] {
    auto start = std::chrono::steady_clock::now();
    std::vector<int> results = pool.map(empty, items, chunksize);
    double elapsed = seconds_since(start);
    if (results != items) wrong_result("map");
    return elapsed;
  });
  report("map", workers, chunksize, tasks, seconds);
}

// Rounds of one apply_async per worker, each round waiting for all of its results.
void measure_apply_async(fiber::Pool& pool, int workers, std::size_t tasks) {
  std::size_t rounds = std::max<std::size_t>(1, tasks / static_cast<std::size_t>(workers));
  std::vector<fiber::AsyncResult<int>> pending;
  pending.reserve(static_cast<std::size_t>(workers));
  auto run_rounds = [&](std::size_t count) {
    for (std::size_t round = 0; round < count; ++round) {
      pending.clear();
      for (int i = 0; i < workers; ++i) pending.push_back(pool.apply_async(empty, i));
      for (int i = 0; i < workers; ++i) {
        if (pending[static_cast<std::size_t>(i)].get() != i) wrong_result("apply_async");
      }
    }
  };
  run_rounds(kWarmUpTasks / static_cast<std::size_t>(workers));
  double seconds = best_seconds([&] {
    auto start = std::chrono::steady_clock::now();
    run_rounds(rounds);
    return seconds_since(start);
  });
  report("apply_async", workers, 1, rounds * static_cast<std::size_t>(workers), seconds);
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& error) {
    std::fprintf(stderr, "fiber_throughput: %s\n%s", error.what(), kUsage);
    return 2;
  }
  if (options.help) {
    std::printf("%s", kUsage);
    return 0;
  }
  const Sizes& sizes = options.sizes;
  // Errors end the program through here, so that the pool and the runtime shut the workers down.
  try {
    // Tasks in the worker process itself (the pool's own overhead), then in the default pool's
    // task processes (what crash containment costs on top).
    for (auto isolation : {fiber::Isolation::none, fiber::Isolation::process}) {
      framework = isolation == fiber::Isolation::none ? "fiber-inline" : "fiber";
      for (int workers : kWorkerCounts) {
        // Pools borrow the runtime's parked workers and spawn only the ones missing.
        fiber::Pool pool({.processes = workers, .isolation = isolation});
        if (pool.size() != workers) {
          throw std::runtime_error("asked for " + std::to_string(workers) + " workers, got " +
                                   std::to_string(pool.size()));
        }
        measure_map(pool, workers, 1, sizes.single);
        measure_map(pool, workers, 0, sizes.chunked);
        measure_apply_async(pool, workers, sizes.apply_async);
      }
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "fiber_throughput: %s\n", error.what());
    return 1;
  }
  return 0;
}
