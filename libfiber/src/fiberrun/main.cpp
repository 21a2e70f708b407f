// fiberrun: mpirun with the settings this MPI stack needs, the same ones fiber::Runtime sets
// (libfiber/src/launch_defaults.cpp). mpirun's options before the program reach it as given;
// without a process count it starts one process, the master, which spawns its workers.
//
//   fiberrun ./app --flag          # = mpirun -n 1 ./app --flag, with the defaults
//   fiberrun --wdir /tmp -x SEED=1 -- ./app
//
// Its exit status is the program's, as a shell gives it (see rank_status.hpp): mpirun, with
// recovery on, says 0 whatever happened. SIGTERM and SIGINT sent to fiberrun go to the program
// alone, so that it can stop gracefully (a batch system's preemption, Ctrl-C); mpirun runs in
// a process group of its own so that a terminal's Ctrl-C does not end the job first (a
// terminal's input reaches it through fiberrun).
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fiberrun/job_end_watch.hpp"
#include "fiberrun/mpirun_command.hpp"
#include "fiberrun/process_tree.hpp"
#include "fiberrun/rank_status.hpp"
#include "fiberrun/rank_supervisor.hpp"
#include "launch_defaults.hpp"
#include "posix/unique_fd.hpp"

namespace {

using namespace std::chrono_literals;

// While mpirun goes on after every rank's program has exited, fiberrun counts the job's
// processes this often (reading all of /proc: at 1,024 workers about 2,000 files, while the
// workers finalize on the same cores) to see whether they are still leaving (job_end_watch.hpp).
constexpr auto kEndLookInterval = 1s;
// How long mpirun may take to end once told to (SIGTERM) before it is killed: after a node's
// loss it waits forever for the dead node's daemon and ignores SIGTERM (docs/platform.md, "A lost
// node forbids spawns"); its daemons on the other nodes end with it.
constexpr auto kJobKillGrace = 10s;
constexpr timespec kPollInterval{0, 100'000'000};
constexpr int kUsageError = 2;
constexpr int kCannotRun = 127;

// Signals for the program (a graceful stop), and signals for the job, i.e. for mpirun.
constexpr int kProgramSignals[] = {SIGTERM, SIGINT};
constexpr int kJobSignals[] = {SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void print_usage() {
  std::fprintf(stderr,
               "usage: fiberrun [mpirun options] [--] program [arguments]\n"
               "Runs mpirun with the settings fiber needs (UCX for spawned workers, recovery,\n"
               "yield when idle; oversubscription and loopback when local). Without -n it\n"
               "starts one process: the master, which spawns its workers. Its exit status is\n"
               "the program's (127 not found, 126 not executable, 128+N killed by signal N).\n");
}

// A private folder for the ranks' status files (rank_status.hpp).
std::filesystem::path make_status_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "fiberrun-XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    std::fprintf(stderr, "fiberrun: cannot create a folder in %s: %s\n",
                 std::filesystem::temp_directory_path().c_str(), std::strerror(errno));
    std::exit(1);
  }
  return pattern;
}

// Copies fiberrun's input to `pipe` until it ends: mpirun, in a background process group, does
// not read a terminal itself.
void relay_input(fiber::posix::UniqueFd pipe) {
  sigset_t broken_pipe;
  sigemptyset(&broken_pipe);
  sigaddset(&broken_pipe, SIGPIPE);  // mpirun gone: write fails with EPIPE instead
  pthread_sigmask(SIG_BLOCK, &broken_pipe, nullptr);
  char buffer[4096];
  for (;;) {
    ssize_t got = read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (write(pipe.get(), buffer, static_cast<std::size_t>(got)) != got) break;
  }
}

pid_t start_mpirun(const std::vector<std::string>& command, const sigset_t& unblocked) {
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  // A terminal's input reaches mpirun through a pipe (and fiberrun).
  auto input = isatty(STDIN_FILENO) ? fiber::posix::open_pipe(O_CLOEXEC) : std::nullopt;
  pid_t launcher = getpid();
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);                     // a terminal's Ctrl-C reaches fiberrun alone
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // fiberrun gone (even SIGKILLed): the job ends
    if (getppid() != launcher) _exit(kCannotRun);
    if (input) dup2(input->read.get(), STDIN_FILENO);
    sigprocmask(SIG_SETMASK, &unblocked, nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "fiberrun: cannot run mpirun: %s (install openmpi-bin)\n",
                 std::strerror(errno));
    _exit(kCannotRun);
  }
  if (input) {
    input->read.reset();
    std::thread(relay_input, std::move(input->write)).detach();
  }
  return child;
}

// Waits for mpirun, passing signals on, and ends the job once its programs are gone.
int wait_for_job(pid_t mpirun, const std::filesystem::path& folder, const sigset_t& signals) {
  using Clock = std::chrono::steady_clock;
  int pending = 0;  // a SIGTERM or SIGINT for the program, not passed on yet
  std::optional<fiberrun::JobEndWatch> programs_ended;  // and the job's processes since
  Clock::time_point last_look;
  std::optional<Clock::time_point> job_ended;  // when mpirun was told to end
  bool job_killed = false;
  int mpirun_status = 0;
  while (waitpid(mpirun, &mpirun_status, WNOHANG) == 0) {
    auto ranks = fiberrun::read_rank_states(folder);
    bool running = false, signaled = false;
    for (const auto& [rank, state] : ranks) {
      if (state.kind == fiberrun::RankState::Kind::running) {
        running = true;
        if (pending) kill(state.value, pending);
      }
      signaled = signaled || state.kind == fiberrun::RankState::Kind::signaled;
    }
    if (running) pending = 0;
    if (!ranks.empty() && !running && !job_ended) {
      // A program killed by a signal leaves its workers waiting: end the job at once. Else the
      // workers are given time to leave, as long as they do.
      auto now = Clock::now();
      if (!programs_ended) {
        programs_ended.emplace(now, fiberrun::count_descendants(mpirun));
        last_look = now;
      } else if (now - last_look >= kEndLookInterval) {
        programs_ended->look(now, fiberrun::count_descendants(mpirun));
        last_look = now;
      }
      if (signaled || programs_ended->overdue(now)) {
        kill(mpirun, SIGTERM);
        job_ended = now;
      }
    }
    if (job_ended && !job_killed && Clock::now() - *job_ended > kJobKillGrace) {
      std::fprintf(stderr,
                   "fiberrun: mpirun did not end %lld s after SIGTERM (a lost node?): killed\n",
                   static_cast<long long>(
                       std::chrono::duration_cast<std::chrono::seconds>(kJobKillGrace).count()));
      kill(mpirun, SIGKILL);
      job_killed = true;
    }
    int signal = sigtimedwait(&signals, nullptr, &kPollInterval);
    for (int program_signal : kProgramSignals) {
      if (signal == program_signal) pending = signal;
    }
    for (int job_signal : kJobSignals) {
      if (signal == job_signal) kill(mpirun, signal);
    }
  }
  auto ranks = fiberrun::read_rank_states(folder);
  if (ranks.empty()) {  // no rank reported (an appfile, or mpirun failed before starting one)
    fiberrun::RankState mpirun_state =
        WIFEXITED(mpirun_status)
            ? fiberrun::RankState{fiberrun::RankState::Kind::exited, WEXITSTATUS(mpirun_status)}
            : fiberrun::RankState{fiberrun::RankState::Kind::signaled, WTERMSIG(mpirun_status)};
    return mpirun_state.shell_status();
  }
  for (const auto& [rank, state] : ranks) {
    std::string how = fiberrun::describe_signal(state);
    if (how.empty()) continue;
    std::string which = ranks.size() > 1 ? " (rank " + std::to_string(rank) + ")" : "";
    std::fprintf(stderr, "fiberrun: the program ended without an exit status%s: %s\n",
                 which.c_str(), how.c_str());
    break;
  }
  return fiberrun::job_status(ranks);
}

}  // namespace

int main(int argc, char** argv) {
  // The signals fiberrun passes on stay blocked and are taken with sigtimedwait (first thing,
  // so that a stop sent right after the start is not lost).
  sigset_t signals, unblocked;
  sigemptyset(&signals);
  for (int signal : kProgramSignals) sigaddset(&signals, signal);
  for (int signal : kJobSignals) sigaddset(&signals, signal);
  sigaddset(&signals, SIGCHLD);
  sigprocmask(SIG_BLOCK, &signals, &unblocked);
  if (argc >= 4 && argv[1] == fiberrun::kSuperviseRankFlag) {
    return fiberrun::supervise_rank(argv[2], {argv + 3, argv + argc}, unblocked);
  }
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? kUsageError : 0;
  }
  fiberrun::CommandLine command_line;
  try {
    command_line =
        fiberrun::split_at_program({argv + 1, argv + argc}, fiberrun::read_mpirun_option_table());
  } catch (const fiberrun::UsageError& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return kUsageError;
  }
  // Hosts named on the command line mean "not local", as a hostfile in the environment does
  // (no loopback-only TCP, no oversubscription), unless FIBER_LOCAL says otherwise.
  if (fiberrun::names_hosts(command_line)) setenv("FIBER_LOCAL", "0", /*overwrite=*/0);
  fiber::detail::apply_launch_defaults();
  std::filesystem::path folder = make_status_folder();
  std::vector<std::string> supervisor{std::filesystem::read_symlink("/proc/self/exe").string(),
                                      std::string(fiberrun::kSuperviseRankFlag), folder.string()};
  pid_t mpirun = start_mpirun(fiberrun::mpirun_command(command_line, supervisor), unblocked);
  int status = wait_for_job(mpirun, folder, signals);
  std::error_code error;
  std::filesystem::remove_all(folder, error);
  return status;
}
