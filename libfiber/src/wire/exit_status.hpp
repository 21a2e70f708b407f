// How a task process ended: as the text of a crash report ("killed by signal SIGSEGV
// (Segmentation fault)", "exited with status 3"), and that text read back as Python's
// Process.exitcode (-N for a signal N, N for an exit status), for fiber::WorkerLost.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fiber::detail {

// `status` as waitpid gives it.
std::string describe_wait_status(int status);

// The exit code a describe_wait_status text names, wherever it stands in `report`; empty if
// it names none.
std::optional<int> exitcode_in(std::string_view report);

}  // namespace fiber::detail
