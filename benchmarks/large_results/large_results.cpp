// Large results from workers to the master: MB/s of results of --megabytes each, one map of
// --results items over --workers workers, after one warm-up map. Prints one CSV row:
//   transports,isolation,workers,megabytes,results,seconds,megabytes_per_second
// where `transports` is UCX_TLS as the job ran with it (fiber's default, or the user's).
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "command_line.hpp"

std::vector<char> result_of(std::uint64_t bytes) { return std::vector<char>(bytes, 'r'); }
FIBER_TASK(result_of);

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);  // sets UCX_TLS unless the environment did
  const char* chosen = std::getenv("UCX_TLS");
  std::string transports = chosen ? chosen : "UCX's default";
  CLI::App app{"Large results from workers to the master", "large_results"};
  int workers = 1;
  int megabytes = 100;
  int results = 10;
  app.add_option("--workers", workers, "workers")->check(CLI::PositiveNumber);
  app.add_option("--megabytes", megabytes, "size of each result, MB")->check(CLI::PositiveNumber);
  app.add_option("--results", results, "results per measurement")->check(CLI::PositiveNumber);
  bool in_worker = false;
  app.add_flag("--in-worker", in_worker,
               "run tasks in the worker process (Isolation::none): the transfer alone");
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;

  constexpr std::uint64_t kMegabyte = 1000 * 1000;
  fiber::Pool pool({.processes = workers,
                    .isolation = in_worker ? fiber::Isolation::none : fiber::Isolation::process});
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(results),
                                   static_cast<std::uint64_t>(megabytes) * kMegabyte);
  pool.map(result_of, std::vector<std::uint64_t>(static_cast<std::size_t>(workers), kMegabyte), 1);
  auto start = std::chrono::steady_clock::now();
  auto received = pool.map(result_of, sizes, 1);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t bytes =
      std::accumulate(received.begin(), received.end(), std::uint64_t{0},
                      [](std::uint64_t sum, const auto& r) { return sum + r.size(); });
  std::printf("%s,%s,%d,%d,%d,%.4f,%.1f\n", transports.c_str(), in_worker ? "none" : "process",
              workers, megabytes, results, seconds,
              static_cast<double>(bytes) / kMegabyte / seconds);
  return 0;
}
