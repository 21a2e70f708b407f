// The job's processes as fiberrun counts them (fiberrun/process_tree.hpp): every descendant of a
// process, children and grandchildren, read from /proc.
#include "fiberrun/process_tree.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace {

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

TEST(ProcessTree, AProcessWithNoChildrenHasNoDescendants) {
  EXPECT_EQ(fiberrun::count_descendants(1 << 22), 0u);  // above every pid_max: no such process
}

}  // namespace
