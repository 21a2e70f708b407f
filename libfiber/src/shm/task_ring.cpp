#include "shm/task_ring.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>

#include "posix/futex.hpp"

namespace fiber::detail::task_ring {

// Counters and flags, each written by one side, on cache lines of their own so that a side's
// writes do not slow the other's reads.
struct Ring::Shared {
  static constexpr std::size_t kLine = 64;
  alignas(kLine) std::atomic<std::uint64_t> written{0};  // bytes ever written (by the writer)
  alignas(kLine) std::atomic<std::uint64_t> taken{0};    // bytes ever read (by the reader)
  alignas(kLine) std::atomic<std::uint32_t> reader_asleep{0};
  alignas(kLine) std::atomic<std::uint32_t> writer_asleep{0};
  alignas(kLine) std::atomic<std::uint32_t> closed{0};
};

namespace {

// What a side's `asleep` flag holds.
constexpr std::uint32_t kAwake = 0;
constexpr std::uint32_t kOnFutex = 1;     // asleep on the flag itself
constexpr std::uint32_t kOnDoorbell = 2;  // the reader, asleep in poll() on its doorbell

// A side that waits (Ring::kSpin, or as told) only polls for the first kBusySpin; then it yields
// between looks, so that on an oversubscribed node the peer it waits for gets the core.
constexpr auto kBusySpin = std::chrono::microseconds(2);

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The other side, after a change: wakes `asleep`'s sleeper if there is one (a system call only
// then). Sequentially consistent with the sleeper's flag and check (Ring::wait): either it sees
// the change or this sees its flag.
// Returns how it slept (kAwake: it did not).
std::uint32_t wake_if_asleep(std::atomic<std::uint32_t>& asleep) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (asleep.load() == kAwake) return kAwake;
  const std::uint32_t how = asleep.exchange(kAwake);
  if (how == kOnFutex) posix::futex_wake(asleep);
  return how;
}

}  // namespace

std::size_t Ring::footprint(std::size_t capacity) { return sizeof(Shared) + capacity; }

Ring::Ring(void* memory, std::size_t capacity)
    : shared_(static_cast<Shared*>(memory)),
      data_(static_cast<char*>(memory) + sizeof(Shared)),
      capacity_(capacity) {
  if (!std::has_single_bit(capacity)) throw std::invalid_argument("a ring's size: a power of two");
}

void Ring::reset() { new (shared_) Shared(); }

std::size_t Ring::space() const {
  return capacity_ - (shared().written.load(std::memory_order_relaxed) -
                      shared().taken.load(std::memory_order_acquire));
}

bool Ring::empty() const {
  return shared().written.load(std::memory_order_acquire) ==
         shared().taken.load(std::memory_order_relaxed);
}

bool Ring::closed() const { return shared().closed.load(std::memory_order_acquire) != 0; }

std::size_t Ring::write_some(std::span<const char> bytes) {
  std::size_t count = std::min(bytes.size(), space());
  if (count == 0) return 0;
  std::uint64_t written = shared().written.load(std::memory_order_relaxed);
  std::size_t at = written & (capacity_ - 1);
  std::size_t first = std::min(count, capacity_ - at);
  std::memcpy(data_ + at, bytes.data(), first);
  std::memcpy(data_, bytes.data() + first, count - first);
  shared().written.store(written + count);
  wake_reader();
  return count;
}

bool Ring::write_all(std::span<const char> bytes, std::chrono::nanoseconds wait,
                     const std::function<bool()>& keep_waiting) {
  for (;;) {
    bytes = bytes.subspan(write_some(bytes));
    if (bytes.empty()) return true;
    if (!wait_space(std::min(bytes.size(), capacity_), wait) && !keep_waiting()) return false;
  }
}

void Ring::close() {
  shared().closed.store(1);
  wake_reader();
}

void Ring::wake_reader() {
  if (wake_if_asleep(shared().reader_asleep) != kOnDoorbell || reader_doorbell_ < 0) return;
  const std::uint64_t one = 1;
  // Fails only if the count is at its maximum: then it is readable anyway.
  [[maybe_unused]] auto written = ::write(reader_doorbell_, &one, sizeof one);
}

std::size_t Ring::read_into(Bytes& out) {
  std::uint64_t taken = shared().taken.load(std::memory_order_relaxed);
  std::size_t count = shared().written.load(std::memory_order_acquire) - taken;
  if (count == 0) return 0;
  std::size_t at = taken & (capacity_ - 1);
  std::size_t first = std::min(count, capacity_ - at);
  out.insert(out.end(), data_ + at, data_ + at + first);
  out.insert(out.end(), data_, data_ + (count - first));
  shared().taken.store(taken + count);
  wake_if_asleep(shared().writer_asleep);
  return count;
}

template <class Ready>
bool Ring::wait(std::atomic<std::uint32_t>& asleep, const Ready& ready,
                std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin) {
  const auto spin_start = std::chrono::steady_clock::now();
  for (auto spun = std::chrono::nanoseconds(0); spun < spin;
       spun = std::chrono::steady_clock::now() - spin_start) {
    if (ready()) return true;
    if (spun < kBusySpin) {
      cpu_relax();
    } else {
      sched_yield();
    }
  }
  if (timeout.count() <= 0) return ready();
  // Until ready or the deadline: a futex wait also ends early (a signal, a wake-up for a change
  // that is not yet enough, one left from an earlier sleep), and the caller takes false for the
  // end of its time (write_all in the unit test gave up after such a wake-up under
  // ThreadSanitizer). The flag goes up again before each look: a wake-up takes it down.
  const auto deadline = spin_start + timeout;
  for (;;) {
    asleep.store(kOnFutex);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ready()) break;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) break;
    posix::futex_wait(asleep, 1, left);
  }
  asleep.store(kAwake);
  return ready();
}

bool Ring::wait_readable(std::chrono::nanoseconds timeout, std::chrono::nanoseconds spin) {
  return wait(
      shared().reader_asleep, [this] { return !empty() || closed(); }, timeout, spin);
}

bool Ring::reader_may_sleep() { return reader_may_sleep(kOnFutex); }

bool Ring::reader_may_sleep_on_doorbell() { return reader_may_sleep(kOnDoorbell); }

bool Ring::reader_may_sleep(std::uint32_t how) {
  shared().reader_asleep.store(how);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (empty() && !closed()) return true;
  reader_awake();
  return false;
}

void Ring::reader_awake() { shared().reader_asleep.store(kAwake); }

const std::atomic<std::uint32_t>& Ring::reader_word() const { return shared().reader_asleep; }

bool Ring::wait_space(std::size_t bytes, std::chrono::nanoseconds timeout) {
  return wait(
      shared().writer_asleep, [this, bytes] { return space() >= bytes; }, timeout, kSpin);
}

}  // namespace fiber::detail::task_ring
