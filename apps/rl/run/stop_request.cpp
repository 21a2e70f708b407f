#include "run/stop_request.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fiber::rl {
namespace {

// The signal number that asked for the stop, 0 until then.
std::atomic<int> requested_by{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void record_stop(int signal) { requested_by.store(signal, std::memory_order_relaxed); }

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = record_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // MPI's and HDF5's system calls go on undisturbed
  for (int signal : {SIGTERM, SIGINT}) {
    if (sigaction(signal, &action, nullptr) != 0) {
      throw std::runtime_error(std::string("cannot handle signal: ") + std::strerror(errno));
    }
  }
}

bool stop_requested() { return requested_by.load(std::memory_order_relaxed) != 0; }

const char* stop_signal_name() {
  switch (requested_by.load(std::memory_order_relaxed)) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "";
  }
}

}  // namespace fiber::rl
