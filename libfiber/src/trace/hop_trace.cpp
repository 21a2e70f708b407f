#include "trace/hop_trace.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "log.hpp"

namespace fiber::detail::hop_trace {
namespace {

struct Mark {
  std::int64_t nanoseconds;
  std::uint64_t chunk_id;
  Point point;
};

// Room reserved at the first mark, so that a mark does not allocate in a measurement.
constexpr std::size_t kReservedMarks = std::size_t{1} << 20;

const char* directory() {
  static const char* const value = [] {
    const char* set = std::getenv("FIBER_HOP_TRACE");
    return set && *set ? set : nullptr;
  }();
  return value;
}

struct Marks {
  std::mutex mutex;  // the master notes from its caller's thread and its progress thread
  std::vector<Mark> marks;
};

Marks& marks() {
  static Marks* const all = new Marks;  // never destroyed: written from destructors at exit
  return *all;
}

}  // namespace

bool enabled() {
  static const bool value = directory() != nullptr;
  return value;
}

void note(Point point, std::uint64_t chunk_id) {
  auto now = std::chrono::steady_clock::now().time_since_epoch();
  Marks& all = marks();
  std::lock_guard lock(all.mutex);
  if (all.marks.capacity() == 0) all.marks.reserve(kReservedMarks);
  all.marks.push_back(
      {std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(), chunk_id, point});
}

void forget_inherited() {
  if (!enabled()) return;
  // The mutex may have been held by another thread of the worker at the fork: a new one.
  new (&marks().mutex) std::mutex;
  marks().marks.clear();
}

void write() {
  if (!enabled()) return;
  Marks& all = marks();
  std::lock_guard lock(all.mutex);
  if (all.marks.empty()) return;
  auto path = fmt::format("{}/hops-{}.csv", directory(), getpid());
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file) {
    log::warn("cannot write the hop trace {}: {}", path, std::strerror(errno));
    return;
  }
  for (const Mark& mark : all.marks) {
    fmt::print(file, "{},{},{},{}\n", getpid(), static_cast<int>(mark.point), mark.chunk_id,
               mark.nanoseconds);
  }
  std::fclose(file);
  all.marks.clear();
}

}  // namespace fiber::detail::hop_trace
