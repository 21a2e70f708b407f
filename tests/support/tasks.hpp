// Small tasks shared by the tests (registered in tasks.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fiber_test {

int square(int x);
int add(int a, int b);
// Sleeps `milliseconds`, then returns `value`.
int sleep_then(int value, int milliseconds);
// The host and process id of the worker that ran it.
std::string where(int ignored);
long worker_pid(int ignored);

}  // namespace fiber_test
