#include "support/shape_tasks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace fiber_test {
namespace {

std::string cpus_of(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  const std::string key = "Cpus_allowed_list:";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key, 0) == 0) {
      auto start = line.find_first_not_of(" \t", key.size());
      return line.substr(start);
    }
  }
  return "?";
}

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "-";
}

}  // namespace

std::vector<std::string> seen_by_task(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
  std::string worker = std::to_string(getppid());
  return {fiber::this_worker().host,
          cpus_of("self"),
          cpus_of(worker),
          variable("OMP_NUM_THREADS"),
          variable("CUDA_VISIBLE_DEVICES"),
          worker};
}

std::vector<std::vector<std::string>> seen_by_each_worker(fiber::Pool& pool, int hold_ms) {
  std::vector<int> holds(static_cast<std::size_t>(pool.size()), hold_ms);
  auto seen = pool.map(seen_by_task, holds, 1);
  std::set<std::string> workers;
  for (const auto& one : seen) workers.insert(one[kWorkerPid]);
  EXPECT_EQ(workers.size(), seen.size()) << "a worker took two items";
  return seen;
}

std::size_t fill_bytes(std::size_t bytes) {
  std::vector<char> filled(bytes, 1);
  return filled.size();
}

std::set<int> numbers_in(const std::string& list) {
  std::set<int> numbers;
  std::stringstream parts(list);
  for (std::string part; std::getline(parts, part, ',');) {
    auto dash = part.find('-');
    int first = std::stoi(part.substr(0, dash));
    int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
    for (int n = first; n <= last; ++n) numbers.insert(n);
  }
  return numbers;
}

}  // namespace fiber_test

FIBER_TASK(fiber_test::seen_by_task);
FIBER_TASK(fiber_test::fill_bytes);
