// One copy of a big read-only array per node, shared zero-copy by the master, the workers and
// their task processes; correct for workers that join later.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fiber/fiber.hpp>

#include <sys/statvfs.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kTableSize = 16 * 1024 * 1024;  // 64 MiB of floats

void fill_table(std::span<float> table) {
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 1000) * 0.5f;
}

std::string table_name() { return "test-table-" + std::to_string(getppid()); }

// The table's checksum as the process running it sees it, and whether it made the copy.
std::uint64_t checksum(const fiber::NodeArray<float>& table) {
  std::uint64_t sum = 0;
  for (float value : table.view()) sum += static_cast<std::uint64_t>(value * 2);
  return sum;
}

}  // namespace

// Runs in a task: opens the node's table by name (the master's name is passed along), and keeps
// it open for the next tasks, as an ES worker keeps its noise table.
std::uint64_t table_checksum(std::string name) {
  static fiber::NodeArray<float> table;
  if (table.size() == 0) table = fiber::NodeArray<float>::open(name, kTableSize, fill_table);
  return checksum(table);
}
FIBER_TASK(table_checksum);

namespace {

// Proportional set size, summed over every process of this machine, of the mappings of files
// whose name ends in `suffix`: what the node really spends on them.
double shared_pss_bytes(const std::string& suffix, int& processes, std::string& detail) {
  double total_kb = 0;
  processes = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;  // self, thread-self
    std::ifstream smaps(entry.path() / "smaps");
    if (!smaps) continue;
    std::string line;
    bool inside = false, counted = false;
    while (std::getline(smaps, line)) {
      if (line.find('-') < line.find(' ') && line.find(' ') != std::string::npos &&
          std::isxdigit(static_cast<unsigned char>(line[0]))) {
        inside = line.size() >= suffix.size() &&
                 line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0;
        if (inside && !counted) {
          ++processes;
          counted = true;
        }
      } else if (inside && line.rfind("Pss:", 0) == 0) {
        total_kb += std::stod(line.substr(4));
        detail += pid + ":" + line.substr(4) + ";";
      }
    }
  }
  return total_kb * 1024;
}

class NodeArrayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    table = new fiber::NodeArray<float>(
        fiber::NodeArray<float>::open(table_name(), kTableSize, fill_table));
  }
  static void TearDownTestSuite() { delete table; }
  static fiber::NodeArray<float>* table;
};
fiber::NodeArray<float>* NodeArrayTest::table = nullptr;

TEST_F(NodeArrayTest, SameContentEverywhere) {
  EXPECT_TRUE(table->created_here());
  EXPECT_EQ((*table)[1001], 0.5f);
  std::uint64_t expected = checksum(*table);
  fiber::Pool pool({.processes = 4});
  for (auto sum : pool.map(table_checksum, std::vector<std::string>(16, table_name()), 1)) {
    EXPECT_EQ(sum, expected);
  }
  pool.resize(6);  // late joiners map the same copy
  for (auto sum : pool.map(table_checksum, std::vector<std::string>(24, table_name()), 1)) {
    EXPECT_EQ(sum, expected);
  }
  fiber::Pool inline_pool({.processes = 2, .isolation = fiber::Isolation::none});
  EXPECT_EQ(inline_pool.apply(table_checksum, table_name()), expected);
}

TEST_F(NodeArrayTest, OneCopyPerNodeWhateverTheWorkerCount) {
  fiber::Pool pool({.processes = 8});
  pool.map(table_checksum, std::vector<std::string>(64, table_name()), 1);
  int processes = 0;
  std::string detail;
  std::string suffix = ".";
  suffix += table_name();  // (not "." + name: gcc 12 warns wrongly about that concatenation)
  double pss = shared_pss_bytes(suffix, processes, detail);
  double table_bytes = kTableSize * sizeof(float);
  EXPECT_GE(processes, 5) << "the task processes did not keep the table mapped";
  // Every page once: the sum of the proportional shares is one table (plus its header page).
  EXPECT_NEAR(pss, table_bytes, table_bytes * 0.05)
      << processes << " processes share " << pss / 1048576 << " MiB: " << detail;
}

TEST_F(NodeArrayTest, TooLargeForDevShmIsOneClearError) {
  struct statvfs space {};
  ASSERT_EQ(statvfs("/dev/shm", &space), 0);
  std::size_t too_many = static_cast<std::size_t>(space.f_bavail) * space.f_frsize * 2 / 4;
  try {
    fiber::NodeArray<float>::open("too-large", too_many, fill_table);
    ADD_FAILURE() << "a table larger than /dev/shm was made";
  } catch (const fiber::Error& error) {
    std::string what = error.what();
    EXPECT_NE(what.find("/dev/shm"), std::string::npos) << what;
    EXPECT_NE(what.find("MiB"), std::string::npos) << what;
  }
}

TEST_F(NodeArrayTest, SameNameOtherSizeIsAnError) {
  EXPECT_THROW(fiber::NodeArray<float>::open(table_name(), kTableSize + 1, fill_table),
               fiber::Error);
  EXPECT_THROW(fiber::NodeArray<float>::open("bad/name", 10, fill_table), fiber::Error);
}

}  // namespace
