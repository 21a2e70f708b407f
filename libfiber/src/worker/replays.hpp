// The calls a worker replays, in order, in every new task process it starts: its pool's
// initializer and the pool's broadcasts, the latest of each broadcast task (a broadcast replaces
// the previous one of its task). The master writes such calls into a lane itself: a new task
// process for that lane gets them from the master, not from here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fiber/serialization.hpp"

namespace fiber::detail {

class Replays {
 public:
  // Keeps a call's run entry, written by the master into `lane` (0: into none); returns the
  // entry kept (valid until the next call).
  std::span<const char> remember(Bytes entry, std::uint64_t lane = 0);
  // Forgets every call (a new pool, a worker that a pool takes without its kept initializer).
  void clear() { calls_.clear(); }
  // A parked worker forgets every call but an initializer that runs ahead (kRunAhead), which its
  // standby task process runs before the next pool asks.
  void keep_ahead();
  // That initializer's entry, if one is kept.
  std::optional<std::span<const char>> ahead() const;
  // The entries a new task process replays, in order: every one, or for a task process being
  // lent as `lane`, those the master did not write into that lane.
  std::vector<std::span<const char>> to_replay(std::optional<std::uint64_t> lane = {}) const;

 private:
  struct Call {
    std::string task;
    Bytes entry;
    std::uint64_t lane = 0;
  };
  std::vector<Call> calls_;
};

}  // namespace fiber::detail
