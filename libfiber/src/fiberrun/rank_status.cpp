#include "fiberrun/rank_status.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <system_error>

namespace fiberrun {
namespace {

constexpr int kShellSignalBase = 128;  // a shell's status for a process a signal ended: 128 + N

const char* word_of(RankState::Kind kind) {
  switch (kind) {
    case RankState::Kind::running:
      return "running";
    case RankState::Kind::exited:
      return "exit";
    case RankState::Kind::signaled:
      return "signal";
  }
  return "";
}

}  // namespace

int RankState::shell_status() const {
  switch (kind) {
    case Kind::exited:
      return value;
    case Kind::signaled:
      return kShellSignalBase + value;
    case Kind::running:
      return kShellSignalBase + SIGKILL;
  }
  return 0;
}

void write_rank_state(const std::filesystem::path& folder, int rank, const RankState& state) {
  std::filesystem::path file = folder / std::to_string(rank);
  std::filesystem::path partial = folder / (std::to_string(rank) + ".partial");
  {
    std::ofstream out(partial);
    if (!out) return;
    out << word_of(state.kind) << ' ' << state.value << '\n';
    if (!out.flush()) return;
  }
  std::error_code error;
  std::filesystem::rename(partial, file, error);
}

std::map<int, RankState> read_rank_states(const std::filesystem::path& folder) {
  std::map<int, RankState> ranks;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path());
    std::string word;
    RankState state;
    if (!(in >> word >> state.value)) continue;
    for (auto kind :
         {RankState::Kind::running, RankState::Kind::exited, RankState::Kind::signaled}) {
      if (word == word_of(kind)) state.kind = kind;
    }
    ranks[std::stoi(name)] = state;
  }
  return ranks;
}

int job_status(const std::map<int, RankState>& ranks) {
  for (const auto& [rank, state] : ranks) {
    if (state.shell_status() != 0) return state.shell_status();
  }
  return 0;
}

std::string describe_signal(const RankState& state) {
  if (state.kind == RankState::Kind::exited) return "";
  int signal = state.kind == RankState::Kind::signaled ? state.value : SIGKILL;
  const char* name = sigabbrev_np(signal);
  return fmt::format("killed by SIG{} (exit {})", name ? name : std::to_string(signal),
                     state.shell_status());
}

}  // namespace fiberrun
