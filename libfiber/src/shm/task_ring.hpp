// A one-way byte stream in memory shared by a worker and its task process: one writer, one
// reader, and no system call while both are awake. A side that finds nothing to do (no bytes to
// read, no room to write) spins briefly, then sleeps on a futex that the other side wakes only
// if it said it sleeps (docs/design.md, "The task-process hop"); a reader may instead sleep in
// poll() on a descriptor of its own (the ring's reader doorbell), beside other descriptors. Bytes
// that do not fit go in pieces, as the reader frees room.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "fiber/serialization.hpp"

namespace fiber::detail::task_ring {

class Ring {
 public:
  // The memory a ring of `capacity` bytes takes (a power of two), to place it in a mapping.
  static std::size_t footprint(std::size_t capacity);
  // A view of the ring laid out in `memory` (footprint(capacity) bytes, mapped MAP_SHARED before
  // the fork); reset() makes it empty.
  Ring(void* memory, std::size_t capacity);
  // Empty, open, nobody asleep: only while no other process uses it.
  void reset();
  // An eventfd that a write makes readable while the reader sleeps on it
  // (reader_may_sleep_on_doorbell). Set in the writer's view: the reader's process sets it before
  // it forks the writer, whose view (a copy) inherits it with the descriptor.
  void set_reader_doorbell(int eventfd) { reader_doorbell_ = eventfd; }

  std::size_t capacity() const { return capacity_; }
  // --- the writer ---
  std::size_t space() const;
  // Copies in as many of `bytes` as fit and wakes a sleeping reader; how many it copied.
  std::size_t write_some(std::span<const char> bytes);
  // Copies in all of `bytes`, waiting for room as needed; between waits of at most `wait`,
  // `keep_waiting` may say to give up (the reader is gone): then false.
  bool write_all(std::span<const char> bytes, std::chrono::nanoseconds wait,
                 const std::function<bool()>& keep_waiting);
  // No more bytes: the reader sees it after the bytes written before.
  void close();

  // --- the reader ---
  bool empty() const;
  bool closed() const;
  // Appends all the ring holds to `out` and wakes a writer waiting for room; how many.
  std::size_t read_into(Bytes& out);

  // How long a side that waits looks again before it sleeps, unless told otherwise: longer than
  // an empty task's trip from the worker through the master and back (a few microseconds), far
  // shorter than a sleep and wake-up.
  static constexpr std::chrono::nanoseconds kSpin = std::chrono::microseconds(10);

  // Spins for `spin`, then sleeps until there are bytes to read (or the ring is closed), for at
  // most `timeout` in all; whether there are.
  bool wait_readable(std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin = kSpin);
  // The same for room for `bytes` (at most the capacity).
  bool wait_space(std::size_t bytes, std::chrono::nanoseconds timeout);

  // --- a reader that sleeps on several rings at once (posix::futex_wait_any) ---
  // Raises the reader's flag, so that a write from now on wakes a sleeper on reader_word() while
  // it holds 1; false (the flag down again) if there are bytes to read already or it is closed.
  bool reader_may_sleep();
  // Lowers the flag: awake again (a write then makes no system call).
  void reader_awake();
  const std::atomic<std::uint32_t>& reader_word() const;
  // As reader_may_sleep(), for a reader that sleeps in poll() on the reader doorbell instead of
  // on reader_word(): a write from now on makes the doorbell readable (the writer's view must
  // have it: set_reader_doorbell). reader_awake() after the sleep.
  bool reader_may_sleep_on_doorbell();

 private:
  struct Shared;
  template <class Ready>
  bool wait(std::atomic<std::uint32_t>& asleep, const Ready& ready,
            std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin);
  Shared& shared() const { return *shared_; }
  // Raises the reader's flag to `how` (on the futex or on the doorbell), unless there is
  // something to read.
  bool reader_may_sleep(std::uint32_t how);
  // After a write or the close: wakes the reader the way it sleeps, if it does.
  void wake_reader();
  Shared* shared_;
  char* data_;
  std::size_t capacity_;
  int reader_doorbell_ = -1;
};

}  // namespace fiber::detail::task_ring
