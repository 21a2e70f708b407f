#include "fiber/detail/shared_segment.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "fiber/errors.hpp"
#include "posix/lock_watcher.hpp"
#include "run_identity.hpp"
#include "this_process.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;

// The first page of a segment: who made it, and whether it is filled.
struct SegmentHeader {
  std::uint64_t magic;
  std::uint64_t bytes;
  std::atomic<std::uint32_t> ready;
};
constexpr std::uint64_t kMagic = 0x66696265724e4131;  // "fiberNA1"
constexpr std::size_t kHeaderBytes = 4096;            // keeps the data page-aligned
// How long a process waits for another on its node to fill a segment, and how often it looks:
// a fill takes far longer than a look.
constexpr auto kFillTimeout = 600s;
constexpr auto kFillPoll = 1ms;
constexpr const char* kShmFolder = "/dev/shm";
constexpr std::uint64_t kMiB = 1024 * 1024;
// The --shm-size suggested for a container that lacks room: the segment and this much more, for
// the others that use /dev/shm (MPI's shared-memory transport, reductions' partial results).
constexpr std::uint64_t kShmHeadroomMiB = 64;
constexpr const char* kSegmentPrefix = "fiber.";
// Opening a segment that its watcher is removing at that moment starts again; a few times are
// more than enough.
constexpr int kOpenAttempts = 100;

// The segment's watcher, run by /bin/sh with the segment open (and nothing else) as its stdin:
// deaf to the signals a job's end and scancel send first (ignored, so also in flock), it waits
// until no process holds a shared lock on the segment, then removes the segment if it still has
// its name ($1).
constexpr const char* kWatcherScript =
    "trap '' TERM INT HUP QUIT USR1 USR2 PIPE; flock -x 0 && "
    "[ \"$(stat -L -c %h /proc/self/fd/0)\" != 0 ] && rm -f -- \"$1\"";

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / kMiB);
}

[[noreturn]] void fail(const std::string& what) { throw Error("fiber: NodeArray " + what); }

void lock(int fd, int operation) {
  while (flock(fd, operation) != 0 && errno == EINTR) {
  }
}

// Every process that maps a segment holds a shared lock on it for the rest of its life (its
// forked task processes share it): the descriptors stay open here until the process ends.
void hold_for_process_lifetime(int fd) {
  static std::mutex mutex;
  static std::vector<int> held;
  std::lock_guard guard(mutex);
  held.push_back(fd);
}

// Starts the watcher of a segment just made (kWatcherScript, posix/lock_watcher.hpp): however
// this node's users of the segment end (exit, SIGKILL, the OOM killer), it removes the segment
// once the last one is gone.
void start_watcher(int fd, const std::string& path) {
  posix::start_lock_watcher(fd, kWatcherScript, "fiber-node-array-watcher", path);
}

// A new segment of `total` bytes, sized but not yet named, with this process's shared lock and
// its watcher.
int make_segment(const std::string& name, const std::string& path, std::size_t total) {
  int fd = open(kShmFolder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    fail(fmt::format("'{}': cannot create it in {}: {}", name, kShmFolder, std::strerror(errno)));
  lock(fd, LOCK_SH);
  struct statvfs space {};
  if (fstatvfs(fd, &space) == 0 && std::uint64_t{space.f_bavail} * space.f_frsize < total) {
    close(fd);
    fail(
        fmt::format("'{}' needs {} in /dev/shm, but only {} are free; enlarge /dev/shm (for "
                    "a container: --shm-size={}m or more)",
                    name, mib(total), mib(std::uint64_t{space.f_bavail} * space.f_frsize),
                    total / kMiB + kShmHeadroomMiB));
  }
  // Reserve the pages now: a full tmpfs then fails here, not with SIGBUS on first touch.
  int reserved = posix_fallocate(fd, 0, static_cast<off_t>(total));
  if (reserved != 0) {
    close(fd);
    fail(fmt::format("'{}' needs {} in /dev/shm: {}", name, mib(total), std::strerror(reserved)));
  }
  start_watcher(fd, path);
  return fd;
}

}  // namespace

std::shared_ptr<SharedSegment> SharedSegment::open(const std::string& name, std::size_t bytes,
                                                   const std::function<void(void*)>& fill) {
  if (name.empty() || name.find('/') != std::string::npos) {
    fail(fmt::format("name '{}' must be non-empty and without '/'", name));
  }
  // One copy per node: the run's and the host's names are part of it (simulated nodes may
  // share one /dev/shm).
  std::string path = fmt::format("{}/{}{}.{}.{}", kShmFolder, kSegmentPrefix, run_identity(),
                                 this_process().host, name);
  std::size_t total = kHeaderBytes + bytes;

  // A segment is named only once it is sized and locked by its maker, whose watcher then
  // removes it; one whose last user is gone may be unnamed by its watcher as we open it.
  int fd = -1;
  bool created = false;
  for (int attempt = 0; attempt < kOpenAttempts && fd < 0; ++attempt) {
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      lock(fd, LOCK_SH);
      struct stat status {};
      if (fstat(fd, &status) == 0 && status.st_nlink > 0) break;
      close(fd);
      fd = -1;
      continue;
    }
    if (errno != ENOENT)
      fail(fmt::format("'{}': cannot open {}: {}", name, path, std::strerror(errno)));
    unlink_stale_node_arrays();
    fd = make_segment(name, path, total);
    if (linkat(AT_FDCWD, fmt::format("/proc/self/fd/{}", fd).c_str(), AT_FDCWD, path.c_str(),
               AT_SYMLINK_FOLLOW) == 0) {
      // Mapped through its name, so that /proc/PID/maps names it in this process too.
      int named = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
      if (named >= 0) {
        lock(named, LOCK_SH);
        close(fd);
        fd = named;
      }
      created = true;
      break;
    }
    int error = errno;
    close(fd);  // another process named its copy first; this one's watcher ends with it
    fd = -1;
    if (error != EEXIST)
      fail(fmt::format("'{}': cannot name {}: {}", name, path, std::strerror(error)));
  }
  if (fd < 0) fail(fmt::format("'{}': {} keeps disappearing while opened", name, path));

  if (!created) {
    struct stat status {};
    if (fstat(fd, &status) != 0 || static_cast<std::size_t>(status.st_size) != total) {
      close(fd);
      fail(fmt::format("'{}' exists on this node with {} bytes, not {}", name,
                       status.st_size - static_cast<off_t>(kHeaderBytes), bytes));
    }
  }
  void* mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    close(fd);
    fail(fmt::format("'{}': mmap failed: {}", name, std::strerror(errno)));
  }
  hold_for_process_lifetime(fd);
  auto* header = static_cast<SegmentHeader*>(mapping);
  char* data = static_cast<char*>(mapping) + kHeaderBytes;
  if (created) {
    header->magic = kMagic;
    header->bytes = bytes;
    fill(data);
    header->ready.store(1, std::memory_order_release);
  } else {
    auto deadline = std::chrono::steady_clock::now() + kFillTimeout;
    while (header->ready.load(std::memory_order_acquire) != 1) {
      if (std::chrono::steady_clock::now() > deadline) {
        munmap(mapping, total);
        fail(fmt::format("'{}' was not filled within {} s by the process that created it", name,
                         kFillTimeout.count()));
      }
      std::this_thread::sleep_for(kFillPoll);
    }
    if (header->magic != kMagic || header->bytes != bytes) {
      munmap(mapping, total);
      fail(fmt::format("'{}' on this node is not a NodeArray of {} bytes", name, bytes));
    }
  }
  mprotect(mapping, total, PROT_READ);  // read-only from here on
  return std::make_shared<SharedSegment>(mapping, total, data, bytes, created);
}

SharedSegment::~SharedSegment() { munmap(mapping_, mapped_); }

void unlink_node_arrays() {
  // Task processes open segments too and end without a word: remove every segment of this run
  // on the node, whoever made it.
  std::error_code error;
  std::string prefix = kSegmentPrefix + run_identity() + ".";
  for (const auto& entry : std::filesystem::directory_iterator(kShmFolder, error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0) unlink(entry.path().c_str());
  }
}

void unlink_stale_node_arrays() {
  // A segment nobody holds a shared lock on has no user left (its watcher was killed too, e.g.
  // by SIGKILL to the whole job step): whichever run and node it belongs to, it is garbage.
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kShmFolder, error)) {
    if (entry.path().filename().string().rfind(kSegmentPrefix, 0) != 0) continue;
    int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;  // another user's, or gone
    struct stat status {};
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &status) == 0 && status.st_nlink > 0) {
      unlink(entry.path().c_str());
    }
    close(fd);
  }
}

namespace {
std::string& identity() {
  static std::string value;
  return value;
}
}  // namespace

const std::string& run_identity() { return identity(); }
void set_run_identity(std::string value) { identity() = std::move(value); }

}  // namespace fiber::detail
