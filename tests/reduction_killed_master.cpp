// A map_reduce whose partial results wait in /dev/shm (one chunk runs for an hour, so its block is
// never combined) when the whole run is SIGKILLed: run by reduction_killed_master.sh, which kills
// the master, its workers and their task processes once this prints "partials stored", then
// looks for what is left. With --start-only, a runtime that starts and ends (its start sweeps).
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

constexpr int kItems = 8;
constexpr int kWorkers = 2;
// Longer than the test's timeout: the block of the chunk that runs it is never combined.
constexpr auto kForever = 1h;
constexpr auto kLookAgain = 50ms;

}  // namespace

int value_or_forever(int i) {
  if (i == kItems - 1) std::this_thread::sleep_for(kForever);
  return i;
}
FIBER_TASK(value_or_forever);

int add(int a, int b) { return a + b; }
FIBER_TASK(add);

namespace {

bool partials_stored(const std::string& prefix) {
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && !name.ends_with(".anchor") && !name.ends_with(".writing")) {
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "--start-only") == 0) return 0;
  fiber::Pool pool({.processes = kWorkers});
  std::vector<int> items(kItems);
  std::iota(items.begin(), items.end(), 0);
  auto reduction = pool.map_reduce_async(value_or_forever, items, add, 1);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string prefix = "fiber-partial." + std::string(host) + "-" + std::to_string(getpid()) + ".";
  while (!partials_stored(prefix)) std::this_thread::sleep_for(kLookAgain);
  std::printf("partials stored\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(kForever);  // until killed
  return 1;
}
