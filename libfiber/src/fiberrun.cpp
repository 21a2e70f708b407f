// fiberrun: mpirun with the settings this MPI stack needs, the same ones fiber::Runtime sets
// (libfiber/src/launch_defaults.cpp). Arguments go to mpirun unchanged; without -n/-np/-c it
// starts one process, the master, which spawns its workers.
//
//   fiberrun ./app --flag          # = mpirun -n 1 ./app --flag, with the defaults
//   fiberrun -n 1 ./app
//
// Its exit status is the master's (see below). SIGTERM and SIGINT sent to fiberrun go to the
// master alone, so that it can stop gracefully (a batch system's preemption or time limit).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "launch_defaults.hpp"

namespace {

// The master as its fiber::Runtime describes it in the status file ("running PID RUN") while
// it runs; pid 0 before, after, and for a program that is not a fiber program.
struct Master {
  pid_t pid = 0;
  std::string run;  // the run's name, which its shared memory segments carry
};
Master running_master(const char* status_path) {
  std::ifstream file(status_path);
  std::string word;
  long pid = 0;
  Master master;
  if (file >> word >> pid >> master.run && word == "running" && pid > 0) {
    master.pid = static_cast<pid_t>(pid);
  }
  return master;
}

// Removes the NodeArray segments of a run on this node (the runtime does it when it ends).
void unlink_node_arrays(const std::string& run) {
  std::string prefix = "fiber." + run + ".";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0) shm_unlink(("/" + file).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // SIGTERM, SIGINT and SIGCHLD stay blocked and are taken with sigwaitinfo below (first thing,
  // so that a stop sent right after the start is not lost).
  sigset_t signals, previous;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGCHLD}) sigaddset(&signals, signal);
  sigprocmask(SIG_BLOCK, &signals, &previous);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fprintf(stderr,
                 "usage: fiberrun [mpirun options] program [arguments]\n"
                 "Runs mpirun with the settings fiber needs (UCX for spawned workers, recovery,\n"
                 "yield when idle; oversubscription and loopback when local). Without -n it\n"
                 "starts one process: the master, which spawns its workers.\n");
    return argc < 2 ? 2 : 0;
  }
  fiber::detail::apply_launch_defaults();
  std::vector<std::string> arguments{"mpirun"};
  bool has_count = false;
  int i = 1;
  // mpirun's options come before the program: the first argument not starting with '-' that is
  // not an option's value is the program. Only the count options matter here.
  for (; i < argc && argv[i][0] == '-'; ++i) {
    std::string option = argv[i];
    arguments.push_back(option);
    if (option == "-n" || option == "-np" || option == "-c" || option == "--n" ||
        option == "--np") {
      has_count = true;
    }
    bool takes_value = option == "-n" || option == "-np" || option == "-c" || option == "--n" ||
                       option == "--np" || option == "--mca" || option == "-mca" ||
                       option == "-x" || option == "--host" || option == "-H" ||
                       option == "--hostfile" || option == "--map-by" || option == "--bind-to";
    if (takes_value && i + 1 < argc) {
      arguments.push_back(argv[++i]);
      if (option == "--mca" || option == "-mca") {
        if (i + 1 < argc) arguments.push_back(argv[++i]);
      }
    }
  }
  if (!has_count) {
    arguments.push_back("-n");
    arguments.push_back("1");
  }
  for (; i < argc; ++i) arguments.push_back(argv[i]);
  std::vector<char*> exec_argv;
  exec_argv.reserve(arguments.size() + 1);
  for (auto& argument : arguments) exec_argv.push_back(argument.data());
  exec_argv.push_back(nullptr);

  // With recovery on (so that a lost worker does not end the job), mpirun exits 0 whatever the
  // program's status: the master's fiber::Runtime writes its exit status to this file instead.
  char status_path[] = "/tmp/fiberrun-status-XXXXXX";
  int status_fd = mkstemp(status_path);
  if (status_fd >= 0) {
    close(status_fd);
    unlink(status_path);  // the runtime creates it; absent means "not a fiber program"
    setenv("FIBER_STATUS_FILE", status_path, 1);
  }
  // SIGTERM and SIGINT sent to fiberrun (Slurm's --signal=B:TERM, kill) go to the master alone,
  // which can then stop gracefully: mpirun would end the whole job on them, workers first. One
  // that comes before the master has started waits for it.
  pid_t child = fork();
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    execvp("mpirun", exec_argv.data());
    std::fprintf(stderr, "fiberrun: cannot run mpirun: %s (install openmpi-bin)\n",
                 std::strerror(errno));
    _exit(127);
  }
  // Other signals meant for the job (a terminal's Ctrl-C also reaches mpirun) are mpirun's.
  for (int signal : {SIGHUP, SIGUSR1, SIGUSR2}) std::signal(signal, SIG_IGN);
  int mpirun_status = 0;
  int pending = 0;  // a SIGTERM or SIGINT not passed on yet
  Master master;    // pid 0 until the master has started
  bool master_lost = false;
  while (waitpid(child, &mpirun_status, WNOHANG) == 0) {
    if (master.pid == 0) master = running_master(status_path);
    if (pending && master.pid > 0) {
      kill(master.pid, pending);
      pending = 0;
    }
    // A master that ended without an exit status (killed by a signal it does not handle, or
    // crashed) leaves its workers waiting and mpirun with them: end the job.
    if (master.pid > 0 && !master_lost && kill(master.pid, 0) != 0 &&
        running_master(status_path).pid == master.pid) {
      master_lost = true;
      kill(child, SIGTERM);
    }
    const timespec poll{0, 100'000'000};
    int signal = sigtimedwait(&signals, nullptr, &poll);
    if (signal == SIGTERM || signal == SIGINT) pending = signal;
  }
  int code = WIFEXITED(mpirun_status) ? WEXITSTATUS(mpirun_status) : 128 + WTERMSIG(mpirun_status);
  std::ifstream status_file(status_path);
  std::string word;
  if (status_file >> word) {
    if (word == "running") {
      std::fprintf(stderr,
                   "fiberrun: the program ended without an exit status (it crashed or "
                   "was killed)\n");
      code = code == 0 ? 1 : code;
      // Its NodeArrays' shared memory on this node would stay until reboot.
      unlink_node_arrays(running_master(status_path).run);
    } else {
      code = std::atoi(word.c_str());
    }
  }
  unlink(status_path);
  return code;
}
