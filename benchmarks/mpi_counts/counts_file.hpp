// The layout of the file the counting library (mpi_counts.cpp) keeps its counters in, shared with
// the programs that read it (counts_check.cpp; es_scaling.py reads the same native 64-bit
// integers in this order).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace fiber_mpi_counts {

constexpr std::uint64_t kMagic = 0x46424d50'49434e54;  // "FBMPICNT"

struct Counters {
  std::atomic<std::uint64_t> magic;
  std::atomic<std::uint64_t> pid;
  std::atomic<std::uint64_t> sent_messages;
  std::atomic<std::uint64_t> sent_bytes;
  std::atomic<std::uint64_t> received_messages;
  std::atomic<std::uint64_t> received_bytes;
  std::atomic<std::uint64_t> spawn_calls;
  std::atomic<std::uint64_t> spawned_processes;
  std::atomic<std::uint64_t> collective_calls;
  std::atomic<std::uint64_t> collective_bytes;
  std::atomic<std::uint64_t> idle_poll_nanoseconds;
  // Received messages that are fiber's heartbeats: a message header alone on the header tag (the
  // only such message a master receives; mpi_counts.cpp checks the shape against wire/channel.hpp).
  std::atomic<std::uint64_t> received_heartbeats;
  // CPU time (thread clocks, all threads) inside MPI calls that did something: sends, receives,
  // waits, tests that completed a request. What the transport costs the master per message, which
  // on this machine is TCP over loopback through the kernel, not a cluster's network.
  std::atomic<std::uint64_t> transport_nanoseconds;
  std::atomic<std::uint64_t> snapshots;  // taken so far (at most kMaxSnapshots kept)
};

constexpr int kTallies = 11;  // the counters from sent_messages to transport_nanoseconds
constexpr int kMaxSnapshots = 4096;
static_assert(offsetof(Counters, transport_nanoseconds) - offsetof(Counters, sent_messages) ==
              (kTallies - 1) * sizeof(std::atomic<std::uint64_t>));

struct Snapshot {
  std::uint64_t process_cpu_nanoseconds;  // all threads of the master, also ended ones
  std::uint64_t tallies[kTallies];
};

struct CountsFile {
  Counters counters;
  Snapshot snapshots[kMaxSnapshots];
};

}  // namespace fiber_mpi_counts
