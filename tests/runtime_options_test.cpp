// fiber::RuntimeOptions: the workers run the program and arguments it names, not the master's.
//
//   runtime_options_test WORKER_PROGRAM [gtest flags]
//
// WORKER_PROGRAM is another path of this binary (CTest makes it a symlink): a worker started
// through it sees it as its argv[0], followed by kWorkerArgument alone.
#include <gtest/gtest.h>
#include <fiber/fiber.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

constexpr const char* kWorkerArgument = "--runtime-options-test-worker";

std::string worker_program;

}  // namespace

// The command line of the process running the task: its task process inherits the worker's.
std::vector<std::string> command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\0', start);
    arguments.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return arguments;
}
FIBER_TASK(command_line);

TEST(RuntimeOptions, WorkersRunTheProgramAndArgumentsGiven) {
  fiber::Pool pool(2);
  auto first = pool.apply_async(command_line);
  auto second = pool.apply_async(command_line);
  for (const auto* pending : {&first, &second}) {
    EXPECT_EQ(pending->get(), (std::vector<std::string>{worker_program, kWorkerArgument}));
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: runtime_options_test WORKER_PROGRAM [gtest flags]\n");
    return 2;
  }
  worker_program = argv[1];
  fiber::Runtime runtime(
      argc, argv, {.worker_program = worker_program, .worker_arguments = {{kWorkerArgument}}});
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
