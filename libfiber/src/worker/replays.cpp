#include "worker/replays.hpp"

#include <algorithm>

#include "wire/run_entry.hpp"

namespace fiber::detail {

std::span<const char> Replays::remember(Bytes entry, std::uint64_t lane) {
  Call call{std::string(RunBody(entry).task()), std::move(entry), lane};
  auto same = std::find_if(calls_.begin(), calls_.end(),
                           [&](const Call& kept) { return kept.task == call.task; });
  if (same != calls_.end()) {
    *same = std::move(call);
    return same->entry;
  }
  calls_.push_back(std::move(call));
  return calls_.back().entry;
}

namespace {

bool runs_ahead(std::span<const char> entry) {
  const std::uint32_t flags = RunBody(entry).header().flags;
  return (flags & kRunInitializer) && (flags & kRunAhead);
}

}  // namespace

void Replays::keep_ahead() {
  std::erase_if(calls_, [](const Call& call) { return !runs_ahead(call.entry); });
}

std::optional<std::span<const char>> Replays::ahead() const {
  for (const Call& call : calls_) {
    if (runs_ahead(call.entry)) return std::span<const char>(call.entry);
  }
  return std::nullopt;
}

std::vector<std::span<const char>> Replays::to_replay(std::optional<std::uint64_t> lane) const {
  std::vector<std::span<const char>> entries;
  for (const Call& call : calls_) {
    if (!lane || call.lane != *lane) entries.emplace_back(call.entry);
  }
  return entries;
}

}  // namespace fiber::detail
