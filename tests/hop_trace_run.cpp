// The hop trace (libfiber/src/trace/hop_trace.hpp, read by benchmarks/overhead/round_hops.py):
// with FIBER_HOP_TRACE set by its CTest, a pool of each isolation runs tasks one apply_async
// each; after the runtime has ended, every chunk has all its marks, in the order of its way,
// each from the process that passes that point: the master, its worker (or the master, for a
// chunk it wrote into a lane), and (tasks isolated) the worker's task process.
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

int square(int x) { return x * x; }
FIBER_TASK(square);

namespace {

constexpr int kWorkers = 2;
constexpr int kTasksPerPool = 10;
// master_sent .. master_received (hop_trace::Point).
constexpr std::size_t kPoints = 7;
constexpr std::size_t kTaskStarted = 3, kTaskEnded = 4, kWorkerReceived = 1;

struct Mark {
  long pid = 0;
  std::int64_t ns = 0;
  bool seen = false;
};
using Marks = std::array<Mark, kPoints>;

int fail(const std::string& why) {
  std::fprintf(stderr, "hop_trace_run: %s\n", why.c_str());
  return 1;
}

std::map<std::uint64_t, Marks> read_marks(const std::filesystem::path& directory) {
  std::map<std::uint64_t, Marks> chunks;
  for (const auto& file : std::filesystem::directory_iterator(directory)) {
    std::ifstream in(file.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      long pid;
      unsigned point;
      std::uint64_t chunk;
      std::int64_t ns;
      char comma;
      fields >> pid >> comma >> point >> comma >> chunk >> comma >> ns;
      if (!fields || point >= kPoints) continue;
      Mark& mark = chunks[chunk][point];
      if (!mark.seen) mark = {pid, ns, true};
    }
  }
  return chunks;
}

}  // namespace

int main(int argc, char** argv) {
  const char* directory = std::getenv("FIBER_HOP_TRACE");
  if (!directory) return fail("FIBER_HOP_TRACE is not set");
  {
    fiber::Runtime runtime(argc, argv);
    for (auto isolation : {fiber::Isolation::process, fiber::Isolation::none}) {
      fiber::Pool pool({.processes = kWorkers, .isolation = isolation});
      for (int i = 0; i < kTasksPerPool; ++i) {
        if (pool.apply(square, i) != i * i) return fail("a wrong square");
      }
    }
  }
  const auto chunks = read_marks(directory);
  if (chunks.size() != 2 * kTasksPerPool) {
    return fail("traced " + std::to_string(chunks.size()) + " chunks, not " +
                std::to_string(2 * kTasksPerPool));
  }
  int isolated = 0, laned = 0;
  for (const auto& [chunk, marks] : chunks) {
    const std::string which = "chunk " + std::to_string(chunk) + ": ";
    for (std::size_t point = 0; point < kPoints; ++point) {
      if (!marks[point].seen) return fail(which + "point " + std::to_string(point) + " missing");
      if (point > 0 && marks[point].ns < marks[point - 1].ns) {
        return fail(which + "point " + std::to_string(point) + " before the one before it");
      }
    }
    // A chunk sent through a worker has its marks 1, 2 and 5 from that worker; one written into
    // a lane (the worker's task process, reached by the master itself) from the master.
    const long master = getpid(), worker = marks[kWorkerReceived].pid;
    if (marks[0].pid != master || marks[kPoints - 1].pid != master) {
      return fail(which + "the master's marks are not the master's");
    }
    if (marks[2].pid != worker || marks[5].pid != worker) {
      return fail(which + "the worker's marks are not from one worker");
    }
    const long runner = marks[kTaskStarted].pid;
    if (marks[kTaskEnded].pid != runner) return fail(which + "the task's marks differ in pid");
    if (runner == master) return fail(which + "the task ran in the master");
    if (runner != worker) ++isolated;
    if (worker == master) ++laned;
  }
  if (isolated != kTasksPerPool) {
    return fail(std::to_string(isolated) + " chunks ran in a task process, not " +
                std::to_string(kTasksPerPool));
  }
  const char* lanes = std::getenv("FIBER_LANES");
  const bool lanes_on = !lanes || std::string(lanes) != "0";
  // Every isolated chunk goes through a lane (the workers are on the master's host), or none.
  if (laned != (lanes_on ? kTasksPerPool : 0)) {
    return fail(std::to_string(laned) + " chunks went through a lane, not " +
                std::to_string(lanes_on ? kTasksPerPool : 0));
  }
  return 0;
}
