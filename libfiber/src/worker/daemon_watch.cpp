#include "worker/daemon_watch.hpp"

#include <unistd.h>

#include <fstream>
#include <string>

namespace fiber::detail {

DaemonWatch::DaemonWatch() {
  pid_t parent = ::getppid();
  std::ifstream comm("/proc/" + std::to_string(parent) + "/comm");
  std::string command;
  std::getline(comm, command);
  if (command == "orted") daemon_ = parent;
}

bool DaemonWatch::gone(Clock::time_point now) {
  if (daemon_ == 0 || now < next_look_) return false;
  next_look_ = now + kLookPeriod;
  return gone_now();
}

bool DaemonWatch::gone_now() const { return daemon_ != 0 && ::getppid() != daemon_; }

}  // namespace fiber::detail
