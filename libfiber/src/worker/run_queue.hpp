// The run entries a worker received and has not started yet, in order. A broadcast that reaches
// the worker through a relay (dispatch/broadcast_routes.hpp) waits in it as a stand-in
// (kRunFromRelay: one item, the first relay's chunk id) until the relay's copy fills it, or the
// master's own copy (kRunRelayFallback) once that relay was lost; whichever comes second is
// dropped. A relay's copy may come before its stand-in (they travel on different
// communicators): it is kept for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>

#include "fiber/serialization.hpp"

namespace fiber::detail {

class RunQueue {
 public:
  // Relays' copies kept for stand-ins not here yet: one per broadcast in flight is enough (the
  // master sends a worker's stand-in right after the first relay's copy); a copy whose stand-in
  // was filled by the master's fallback meanwhile is dropped with the oldest.
  static constexpr std::size_t kMaxEarlyRelayed = 2;

  // A run entry from the master: queued, or the body of the stand-in it names
  // (kRunRelayFallback), which keeps its place.
  void add_from_master(std::span<const char> entry);
  // An entry queued as it is (a broadcast this worker relays, and runs too).
  void add(std::span<const char> entry) { queue_.emplace_back(entry.begin(), entry.end()); }
  // A relay's copy: fills the stand-in that waits for it, else is kept for one to come.
  void add_relayed(std::span<const char> entry);

  bool empty() const { return queue_.empty(); }
  // The first entry: a stand-in still waits for its body (RunBody's flags say kRunFromRelay).
  const Bytes& front() const { return queue_.front(); }
  Bytes pop_front();
  // Every entry, in order, taken out (a terminated pool's).
  std::deque<Bytes> take_all();

 private:
  // Replaces the first stand-in that `matches` with `entry`, under the stand-in's chunk id and
  // flags (less kRunFromRelay); false if none matches.
  template <class Matches>
  bool fill_stand_in(const Matches& matches, std::span<const char> entry);
  bool fill_relayed(std::span<const char> entry);

  std::deque<Bytes> queue_;
  std::deque<Bytes> early_relayed_;  // the latest kMaxEarlyRelayed
};

}  // namespace fiber::detail
