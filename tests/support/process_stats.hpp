// What /proc says of another process of the job on this machine (simulated nodes included), for
// the tests that count instead of timing: its CPU, its wake-ups, its environment.
#pragma once

#include <filesystem>
#include <string>

namespace fiber_test {

// utime + stime of process `pid`, all its threads, in ticks of 1/sysconf(_SC_CLK_TCK) s; 0 if it
// is gone.
long cpu_ticks(long pid);

// Context switches (voluntary and not) of one thread, from its status file
// (/proc/PID/task/TID/status): its wake-ups.
long thread_switches(const std::filesystem::path& status_file);

// utime + stime of process `pid` and of its children (a worker and its task process), all
// their threads, in ticks of 1/sysconf(_SC_CLK_TCK) s; what it has of them if one is gone.
long cpu_ticks_with_children(long pid);

// Context switches (voluntary and not) of every thread of process `pid`: its wake-ups.
long wakeups_of_threads(long pid);

// The value of `name` in the environment process `pid` started with ("" if unset or gone).
std::string environment_value(long pid, const std::string& name);

// This process's CPU time (all its threads), in seconds.
double own_cpu_seconds();

}  // namespace fiber_test
