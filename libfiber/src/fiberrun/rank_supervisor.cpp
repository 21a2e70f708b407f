#include "fiberrun/rank_supervisor.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fiberrun/rank_status.hpp"

namespace fiberrun {
namespace {

constexpr int kNotFound = 127;       // a shell's status for a command it cannot find
constexpr int kNotExecutable = 126;  // ... and for one it found but cannot execute

int this_rank() {
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank ? std::atoi(rank) : 0;
}

}  // namespace

int supervise_rank(const std::filesystem::path& folder, std::span<char* const> program,
                   const sigset_t& unblocked) {
  std::vector<char*> argv(program.begin(), program.end());
  argv.push_back(nullptr);
  pid_t supervisor = getpid();
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "fiberrun: cannot start %s: %s\n", argv[0], std::strerror(errno));
    return kNotExecutable;
  }
  if (child == 0) {
    // Killed with its supervisor, as Open MPI meant for the process it started.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != supervisor) _exit(kNotExecutable);
    sigprocmask(SIG_SETMASK, &unblocked, nullptr);
    execvp(argv[0], argv.data());
    int error = errno;
    std::fprintf(stderr, "fiberrun: %s: %s\n", argv[0], std::strerror(error));
    _exit(error == ENOENT || error == ENOTDIR ? kNotFound : kNotExecutable);
  }
  int rank = this_rank();
  write_rank_state(folder, rank, {RankState::Kind::running, child});
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  RankState ended = WIFSIGNALED(status) ? RankState{RankState::Kind::signaled, WTERMSIG(status)}
                                        : RankState{RankState::Kind::exited, WEXITSTATUS(status)};
  write_rank_state(folder, rank, ended);
  return ended.shell_status();
}

}  // namespace fiberrun
