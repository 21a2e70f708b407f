#include "wire/exit_status.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <charconv>
#include <cstring>

namespace fiber::detail {
namespace {

constexpr std::string_view kSignalled = "killed by signal ";
constexpr std::string_view kExited = "exited with status ";

std::optional<int> number_at(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{}) return std::nullopt;
  return value;
}

// A signal by its abbreviation after "SIG" (sigabbrev_np's), or by its number.
std::optional<int> signal_at(std::string_view text) {
  if (!text.starts_with("SIG")) return number_at(text);
  std::string_view name = text.substr(3, text.find_first_of(" (") - 3);
  for (int signal = 1; signal < NSIG; ++signal) {
    const char* abbreviation = sigabbrev_np(signal);
    if (abbreviation && name == abbreviation) return signal;
  }
  return std::nullopt;
}

}  // namespace

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    const char* name = sigabbrev_np(signal);
    return std::string(kSignalled) + (name ? "SIG" + std::string(name) : std::to_string(signal)) +
           " (" + strsignal(signal) + ")";
  }
  if (WIFEXITED(status)) return std::string(kExited) + std::to_string(WEXITSTATUS(status));
  return "ended";
}

std::optional<int> exitcode_in(std::string_view report) {
  if (auto at = report.rfind(kSignalled); at != std::string_view::npos) {
    auto signal = signal_at(report.substr(at + kSignalled.size()));
    if (signal) return -*signal;
    return std::nullopt;
  }
  if (auto at = report.rfind(kExited); at != std::string_view::npos) {
    return number_at(report.substr(at + kExited.size()));
  }
  return std::nullopt;
}

}  // namespace fiber::detail
