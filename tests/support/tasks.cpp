#include "tasks.hpp"

#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <thread>

namespace fiber_test {

int square(int x) { return x * x; }
int add(int a, int b) { return a + b; }
int sleep_then(int value, int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  return value;
}
std::string where(int /*ignored*/) { return fiber::this_worker().host; }
long worker_pid(int /*ignored*/) { return static_cast<long>(getpid()); }

}  // namespace fiber_test

FIBER_TASK(fiber_test::square);
FIBER_TASK(fiber_test::add);
FIBER_TASK(fiber_test::sleep_then);
FIBER_TASK(fiber_test::where);
FIBER_TASK(fiber_test::worker_pid);
