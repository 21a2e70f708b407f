#include "worker/replays.hpp"

#include <algorithm>

#include "wire/run_entry.hpp"

namespace fiber::detail {

void Replays::remember(std::span<const char> entry, std::uint64_t lane) {
  Call call{std::string(RunBody(entry).task()), Bytes(entry.begin(), entry.end()), lane};
  auto same = std::find_if(calls_.begin(), calls_.end(),
                           [&](const Call& kept) { return kept.task == call.task; });
  if (same != calls_.end()) {
    *same = std::move(call);
  } else {
    calls_.push_back(std::move(call));
  }
}

std::vector<std::span<const char>> Replays::to_replay(std::optional<std::uint64_t> lane) const {
  std::vector<std::span<const char>> entries;
  for (const Call& call : calls_) {
    if (!lane || call.lane != *lane) entries.emplace_back(call.entry);
  }
  return entries;
}

}  // namespace fiber::detail
