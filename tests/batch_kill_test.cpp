// SIGKILL of one worker of a batch (the workers of one MPI_Comm_spawn) in the middle of a map:
// every item ends with its one correct result, only the items the killed worker held run twice,
// its siblings keep working, and the pool gets a replacement (issue 17, item 7;
// docs/platform.md, "A batch from one spawn survives the loss of one member").
//
// Each case needs a fresh batch, so CTest runs each in its own runtime (one --gtest_filter per
// test) and checks that the runtime's log says the pool's workers started with one spawn.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int kWorkers = 4;
constexpr int kItems = 200;
constexpr int kShortestItemMs = 5;
constexpr int kLongestItemMs = 20;
// The kill lands once this many items ran, well before the map's end.
constexpr int kRunsBeforeKill = kItems / 5;
// Long enough that a sibling starved by a loaded machine is not taken for lost too.
constexpr auto kWorkerTimeout = 2s;
// Against a hang only: a map with one loss takes ~2-3 s here.
constexpr auto kMapDeadline = 30s;
constexpr auto kProgressPoll = 1ms;

int item_ms(int item) {
  return kShortestItemMs + (item * 7919) % (kLongestItemMs - kShortestItemMs + 1);
}
int result_of(int item) { return item * item + 1; }

// Appends one line to `path` with a single write (O_APPEND: lines of concurrent writers do not
// mix; the master and the task processes share the file system).
void append_line(const std::string& path, const std::string& line) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  auto written = write(fd, line.data(), line.size());
  close(fd);
  if (written != static_cast<ssize_t>(line.size()))
    throw std::runtime_error("cannot write " + path);
}

}  // namespace

// Records "run ITEM WORKER_PID" in `runs_file` as it starts (so an item killed midway counts as
// run), then runs for item_ms(item).
int recorded_run(std::string runs_file, int item) {
  append_line(runs_file, "run " + std::to_string(item) + " " +
                             std::to_string(fiber::this_worker().pid) + "\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(item_ms(item)));
  return result_of(item);
}
FIBER_TASK(recorded_run);

namespace {

struct RecordedRun {
  int item;
  long pid;
  bool after_kill;
};

// The runs recorded in `runs_file`; a line "kill PID" (the master's) marks the kill's moment.
std::vector<RecordedRun> read_runs(const std::string& runs_file) {
  std::vector<RecordedRun> runs;
  std::ifstream in(runs_file);
  std::string line;
  bool after_kill = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what;
    words >> what;
    if (what == "kill") {
      after_kill = true;
      continue;
    }
    RecordedRun run{-1, 0, after_kill};
    words >> run.item >> run.pid;
    runs.push_back(run);
  }
  return runs;
}

std::size_t line_count(const std::string& path) {
  std::ifstream in(path);
  return static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
}

std::set<long> pids_of(const std::vector<fiber::WorkerInfo>& workers) {
  std::set<long> pids;
  for (const auto& worker : workers) pids.insert(worker.pid);
  return pids;
}

class BatchKill : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "batch-kill.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::tuple<std::string, int>> items_recording_to(const std::string& runs_file) {
    std::vector<std::tuple<std::string, int>> items;
    for (int item = 0; item < kItems; ++item) items.emplace_back(runs_file, item);
    return items;
  }

  // The whole scenario, with the pool's tasks isolated as `isolation` and `chunksize` (0:
  // automatic) for the map the kill lands in.
  void kill_one_of_a_batch_mid_map(fiber::Isolation isolation, std::size_t chunksize) {
    fiber::Pool pool(
        {.processes = kWorkers, .isolation = isolation, .worker_timeout = kWorkerTimeout});
    auto batch = pool.workers();
    ASSERT_EQ(batch.size(), static_cast<std::size_t>(kWorkers));
    // The runtime's first workers: the pool's start spawned them (the log says with one spawn).
    std::set<int> ids, first_ids;
    for (const auto& worker : batch) ids.insert(worker.id);
    for (int id = 0; id < kWorkers; ++id) first_ids.insert(id);
    ASSERT_EQ(ids, first_ids) << "each case needs its own runtime";

    const std::string runs_file = (dir_ / "runs").string();
    auto pending = pool.map_async(recorded_run, items_recording_to(runs_file), chunksize);
    while (line_count(runs_file) < static_cast<std::size_t>(kRunsBeforeKill)) {
      ASSERT_FALSE(pending.ready()) << "the map ended before the kill";
      std::this_thread::sleep_for(kProgressPoll);
    }
    // The worker that started the latest run: one that is in the middle of an item.
    const long victim = read_runs(runs_file).back().pid;
    std::set<long> siblings = pids_of(batch);
    ASSERT_EQ(siblings.erase(victim), 1u);
    ASSERT_EQ(kill(static_cast<pid_t>(victim), SIGKILL), 0);
    append_line(runs_file, "kill " + std::to_string(victim) + "\n");

    ASSERT_TRUE(pending.wait(kMapDeadline))
        << "the map did not end within " << kMapDeadline.count() << " s of the kill";
    auto results = pending.get();
    ASSERT_EQ(results.size(), static_cast<std::size_t>(kItems));
    for (int item = 0; item < kItems; ++item) {
      EXPECT_EQ(results[static_cast<std::size_t>(item)], result_of(item)) << "item " << item;
    }

    std::map<int, int> runs_by_victim, runs_by_others;
    std::set<long> siblings_after_kill;
    for (const RecordedRun& run : read_runs(runs_file)) {
      ++(run.pid == victim ? runs_by_victim : runs_by_others)[run.item];
      if (run.after_kill && siblings.count(run.pid)) siblings_after_kill.insert(run.pid);
    }
    int ran_twice = 0;
    for (int item = 0; item < kItems; ++item) {
      int by_victim = runs_by_victim[item], by_others = runs_by_others[item];
      EXPECT_GE(by_victim + by_others, 1) << "item " << item << " never ran";
      // Run again only if it was on the killed worker: once there, once elsewhere.
      EXPECT_LE(by_victim, 1) << "item " << item;
      EXPECT_LE(by_others, 1) << "item " << item << " ran twice, not on the killed worker";
      if (by_victim + by_others > 1) ++ran_twice;
    }
    std::printf("killed worker %ld after %d runs; %d item(s) ran again elsewhere\n", victim,
                kRunsBeforeKill, ran_twice);
    EXPECT_EQ(siblings_after_kill, siblings) << "a sibling of the killed worker stopped working";

    auto stats = pool.stats();
    EXPECT_EQ(stats.workers_lost, 1u);
    EXPECT_EQ(stats.tasks_failed, 0u);
    EXPECT_GE(stats.tasks_retried, 1u);
    EXPECT_EQ(pool.size(), kWorkers);

    // Afterwards: the 3 siblings and a replacement, each of them running items of the next map.
    auto now = pool.workers();
    std::set<long> pids_now = pids_of(now);
    EXPECT_EQ(pids_now.size(), static_cast<std::size_t>(kWorkers));
    EXPECT_FALSE(pids_now.count(victim));
    for (long sibling : siblings) EXPECT_TRUE(pids_now.count(sibling)) << "sibling " << sibling;
    const std::string second_runs_file = (dir_ / "second-runs").string();
    auto second = pool.map(recorded_run, items_recording_to(second_runs_file), 1);
    ASSERT_EQ(second.size(), static_cast<std::size_t>(kItems));
    for (int item = 0; item < kItems; ++item) {
      EXPECT_EQ(second[static_cast<std::size_t>(item)], result_of(item)) << "item " << item;
    }
    std::set<long> second_pids;
    for (const RecordedRun& run : read_runs(second_runs_file)) second_pids.insert(run.pid);
    EXPECT_EQ(second_pids, pids_now);
    EXPECT_EQ(pool.stats().workers_lost, 1u);
  }

  std::filesystem::path dir_;
};

TEST_F(BatchKill, TaskProcessesOneItemPerChunk) {
  kill_one_of_a_batch_mid_map(fiber::Isolation::process, 1);
}

TEST_F(BatchKill, TaskProcessesAutomaticChunks) {
  kill_one_of_a_batch_mid_map(fiber::Isolation::process, 0);
}

TEST_F(BatchKill, InWorkerProcessOneItemPerChunk) {
  kill_one_of_a_batch_mid_map(fiber::Isolation::none, 1);
}

TEST_F(BatchKill, InWorkerProcessAutomaticChunks) {
  kill_one_of_a_batch_mid_map(fiber::Isolation::none, 0);
}

}  // namespace
