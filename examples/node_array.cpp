// fiber::NodeArray: a large read-only table with one copy per node, shared zero-copy by the
// master, its workers and their task processes (e.g. the noise table of Evolution Strategies).
// The first process on a node to open it fills it; the others map that copy.
//
//   fiberrun -n 1 ./example-node-array
#include <fiber/fiber.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kTableSize = 1 << 20;  // a million values: 8 MiB, one copy per node
constexpr std::size_t kSlices = 8;
constexpr std::uint64_t kPattern = 1000;  // the table holds 0, 1, ..., kPattern - 1, 0, 1, ...
const std::string kTableName = "example-table";

// Must give the same content wherever it runs: any process may be the node's first.
void fill_table(std::span<std::uint64_t> table) {
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = i % kPattern;
}

// Opens the node's copy on first use and keeps it open for the task process's next tasks.
const fiber::NodeArray<std::uint64_t>& table() {
  static const auto opened =
      fiber::NodeArray<std::uint64_t>::open(kTableName, kTableSize, fill_table);
  return opened;
}

}  // namespace

// The sum of one slice of the table, read where the task runs.
std::uint64_t slice_sum(std::size_t slice) {
  std::span<const std::uint64_t> values = table().view();
  std::size_t length = values.size() / kSlices;
  auto part = values.subspan(slice * length, length);
  return std::accumulate(part.begin(), part.end(), std::uint64_t{0});
}
FIBER_TASK(slice_sum);

// Whether the task's process made the node's copy (false: it mapped the master's).
bool made_the_copy(int) { return table().created_here(); }
FIBER_TASK(made_the_copy);

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  std::printf("master made the copy: %s\n", table().created_here() ? "yes" : "no");

  fiber::Pool pool({.processes = 2});
  std::vector<std::size_t> slices(kSlices);
  std::iota(slices.begin(), slices.end(), std::size_t{0});
  std::vector<std::uint64_t> sums = pool.map(slice_sum, slices, 1);
  std::uint64_t in_tasks = std::accumulate(sums.begin(), sums.end(), std::uint64_t{0});

  std::span<const std::uint64_t> values = table().view();
  std::uint64_t in_master = std::accumulate(values.begin(), values.end(), std::uint64_t{0});
  std::printf("sum read by the tasks: %llu\n", static_cast<unsigned long long>(in_tasks));
  std::printf("sum read by the master: %llu\n", static_cast<unsigned long long>(in_master));

  std::vector<bool> made = pool.map(made_the_copy, std::vector<int>{0, 1, 2, 3}, 1);
  bool any = std::find(made.begin(), made.end(), true) != made.end();
  std::printf("a task made its own copy: %s\n", any ? "yes" : "no");
  return in_tasks == in_master && !any ? 0 : 1;
}
