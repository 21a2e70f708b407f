// The job's processes as fiberrun counts them (fiberrun/process_tree.hpp): every descendant of a
// process, children and grandchildren, read from /proc.
#include "fiberrun/process_tree.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Forks a child, leader of a process group of its own, that forks `grandchildren` children in
// that group, all of them sleeping until killed; returns the child once its children are there.
pid_t fork_family(int grandchildren) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    for (int i = 0; i < grandchildren; ++i) {
      if (fork() == 0) {
        for (;;) pause();
      }
    }
    char done = 1;
    (void)!write(ready[1], &done, 1);
    for (;;) pause();
  }
  char done = 0;
  (void)!read(ready[0], &done, 1);
  close(ready[0]);
  close(ready[1]);
  return child;
}

TEST(ProcessTree, CountsChildrenAndTheirChildren) {
  // Other tests of this program may have left children of their own.
  const std::size_t before = fiberrun::count_descendants(getpid());
  pid_t first = fork_family(2);
  pid_t second = fork_family(0);
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  EXPECT_EQ(fiberrun::count_descendants(getpid()), before + 4);
  EXPECT_EQ(fiberrun::count_descendants(first), 2u);
  kill(-second, SIGKILL);
  waitpid(second, nullptr, 0);
  EXPECT_EQ(fiberrun::count_descendants(getpid()), before + 3);
  kill(-first, SIGKILL);  // the child and its children
  waitpid(first, nullptr, 0);
}

// A process that ends while its stat file is read: the read fails (ESRCH) after the open
// succeeded, which libstdc++'s stream buffer throws for. A stat that is a directory fails the
// same way (EISDIR). fiberrun read such a file in a 256-worker job and ended in std::terminate.
TEST(ProcessTree, AStatFileThatFailsToReadCountsAsAGoneProcess) {
  const fs::path proc = fs::temp_directory_path() / ("fiber_proc_" + std::to_string(getpid()));
  fs::create_directories(proc / "10");
  fs::create_directories(proc / "11" / "stat");  // read() fails
  fs::create_directories(proc / "12");
  std::ofstream(proc / "10" / "stat") << "10 (a (b) c) S 1 10 10 0";
  std::ofstream(proc / "12" / "stat") << "12 (worker) R 10 10 10 0";
  EXPECT_EQ(fiberrun::count_descendants(1, proc), 2u);
  EXPECT_EQ(fiberrun::count_descendants(10, proc), 1u);
  fs::remove_all(proc);
}

TEST(ProcessTree, AProcessWithNoChildrenHasNoDescendants) {
  EXPECT_EQ(fiberrun::count_descendants(1 << 22), 0u);  // above every pid_max: no such process
}

}  // namespace
