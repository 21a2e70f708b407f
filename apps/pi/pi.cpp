// Estimates pi by Monte Carlo on a pool: each task throws `samples` darts with its own seed and
// counts those inside the unit circle. CTest runs it (pi_estimates_pi, pi_rejects_bad_flag).
//
//   fiberrun ./fiber-pi --workers 4 --tasks 200 --samples 1000000
#include <fiber/fiber.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <vector>

// Darts inside the quarter circle out of `samples`, from the random stream `seed`.
std::uint64_t count_inside(std::uint64_t seed, std::uint64_t samples) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uint64_t inside = 0;
  for (std::uint64_t i = 0; i < samples; ++i) {
    double x = unit(generator), y = unit(generator);
    inside += x * x + y * y <= 1.0;
  }
  return inside;
}
FIBER_TASK(count_inside);

namespace {

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "fiber-pi: %s\nusage: fiber-pi [--workers N] [--tasks N] [--samples N]\n",
               message.c_str());
  std::exit(2);
}

std::uint64_t positive(const char* flag, const char* text) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (!*text || *end || value == 0 || text[0] == '-') {
    usage_error(std::string(flag) + " needs a positive whole number, not '" + text + "'");
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  int workers = 0;
  std::uint64_t tasks = 200, samples = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("usage: fiber-pi [--workers N] [--tasks N] [--samples N]\n");
      return 0;
    }
    if (i + 1 >= argc) usage_error("unknown or incomplete option '" + flag + "'");
    if (flag == "--workers") {
      workers = static_cast<int>(positive("--workers", argv[++i]));
    } else if (flag == "--tasks") {
      tasks = positive("--tasks", argv[++i]);
    } else if (flag == "--samples") {
      samples = positive("--samples", argv[++i]);
    } else {
      usage_error("unknown option '" + flag + "'");
    }
  }

  auto started = std::chrono::steady_clock::now();
  fiber::Pool pool({.processes = workers});
  std::printf("fiber-pi: %d workers, %llu tasks of %llu samples\n", pool.size(),
              static_cast<unsigned long long>(tasks), static_cast<unsigned long long>(samples));
  std::vector<std::tuple<std::uint64_t, std::uint64_t>> calls;
  for (std::uint64_t seed = 0; seed < tasks; ++seed) calls.emplace_back(seed, samples);

  std::uint64_t inside = 0, done = 0;
  for (std::uint64_t count : pool.imap_unordered(count_inside, calls)) {
    inside += count;
    if (++done % std::max<std::uint64_t>(1, tasks / 10) == 0) {
      std::printf("  %3llu%%  pi ~ %.6f\n", static_cast<unsigned long long>(100 * done / tasks),
                  4.0 * static_cast<double>(inside) / static_cast<double>(done * samples));
      std::fflush(stdout);
    }
  }
  double estimate = 4.0 * static_cast<double>(inside) / static_cast<double>(tasks * samples);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("pi = %.6f (error %.2e) from %llu samples in %.2f s\n", estimate,
              std::abs(estimate - std::numbers::pi),
              static_cast<unsigned long long>(tasks) * samples, seconds);
  return 0;
}
