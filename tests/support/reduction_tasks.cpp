#include "support/reduction_tasks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fiber/fiber.hpp>

namespace fiber_test {
namespace {

// spread_value's magnitudes span 2^-20 .. 2^19: many additions round.
constexpr int kExponentSpan = 40;
constexpr int kExponentStride = 7;
// Its mantissas differ item by item too, so that no two items of a span are equal.
constexpr double kMantissaStep = 1e-3;

}  // namespace

double spread_value(int i) {
  return std::ldexp(1.0 + i * kMantissaStep,
                    (i * kExponentStride) % kExponentSpan - kExponentSpan / 2);
}

double add_doubles(double a, double b) { return a + b; }

std::vector<int> single(int i) { return {i}; }

std::vector<int> concatenate(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double spread_value_or_kill_worker(int i, int kill_at, const std::string& marker) {
  if (i == kill_at) {
    int file = open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (file >= 0) {
      close(file);
      kill(getppid(), SIGKILL);
      pause();  // this task process goes with its worker
    }
  }
  return spread_value(i);
}

double spread_value_or_drop_partials(int i, int drop_at, const std::string& marker) {
  if (i == drop_at) {
    int file = open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (file >= 0) {
      close(file);
      std::error_code error;
      for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
        // Only what chunks stored: a file another worker is still writing (under its temporary
        // name, partial_store.cpp) is not yet in the store.
        std::string name = entry.path().filename().string();
        if (name.starts_with("fiber-partial.") && !name.ends_with(".writing") &&
            !name.ends_with(".anchor")) {
          std::filesystem::remove(entry.path(), error);
        }
      }
    }
  }
  return spread_value(i);
}

double tree_sum(const std::vector<std::size_t>& block_sizes,
                const std::vector<std::size_t>& chunk_sizes) {
  double total = 0;
  int item = 0;
  for (std::size_t b = 0; b < block_sizes.size(); ++b) {
    double block = 0;
    for (std::size_t done = 0; done < block_sizes[b];) {
      std::size_t count = std::min(chunk_sizes[b], block_sizes[b] - done);
      double chunk = spread_value(item++);
      for (std::size_t k = 1; k < count; ++k) chunk += spread_value(item++);
      block = done == 0 ? chunk : block + chunk;
      done += count;
    }
    total = b == 0 ? block : total + block;
  }
  return total;
}

double linear_sum(int items) {
  double total = spread_value(0);
  for (int i = 1; i < items; ++i) total += spread_value(i);
  return total;
}

}  // namespace fiber_test

FIBER_TASK(fiber_test::spread_value);
FIBER_TASK(fiber_test::add_doubles);
FIBER_TASK(fiber_test::single);
FIBER_TASK(fiber_test::concatenate);
FIBER_TASK(fiber_test::spread_value_or_kill_worker);
FIBER_TASK(fiber_test::spread_value_or_drop_partials);
