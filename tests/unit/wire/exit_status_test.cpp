// How a task process ended, as text and back as Python's exitcode (wire/exit_status.hpp).
#include "wire/exit_status.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace fiber::detail {
namespace {

// The waitpid status of a child that ran `end`.
template <class End>
int status_of(End end) {
  pid_t child = fork();
  if (child == 0) end();
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// SIGTERM and SIGKILL, not SIGSEGV: the sanitizers catch a SIGSEGV in the child and end it their
// own way (process_test has a real segfault's -11).
TEST(ExitStatus, ASignalIsItsNegativeNumber) {
  int status = status_of([] { raise(SIGTERM); });
  EXPECT_EQ(describe_wait_status(status), "killed by signal SIGTERM (Terminated)");
  EXPECT_EQ(exitcode_in("the task process " + describe_wait_status(status)), -SIGTERM);
  EXPECT_EQ(exitcode_in(describe_wait_status(status_of([] { raise(SIGKILL); }))), -SIGKILL);
}

TEST(ExitStatus, AnExitIsItsStatus) {
  int status = status_of([] { _exit(3); });
  EXPECT_EQ(describe_wait_status(status), "exited with status 3");
  EXPECT_EQ(exitcode_in("the task process exited with status 3"), 3);
}

TEST(ExitStatus, OtherTextNamesNone) {
  EXPECT_EQ(exitcode_in("the worker was silent for 10 s"), std::nullopt);
  EXPECT_EQ(exitcode_in("killed by signal SIGNOTONE (?)"), std::nullopt);
}

}  // namespace
}  // namespace fiber::detail
