#include "reduction/partial_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "posix/lock_watcher.hpp"
#include "posix/unique_fd.hpp"
#include "posix/write_all.hpp"
#include "run_identity.hpp"
#include "this_process.hpp"

namespace fiber::detail::partial_store {
namespace {

constexpr const char* kFolder = "/dev/shm";
constexpr const char* kPrefix = "fiber-partial.";
// The last part of the anchor's name (after the run's and host's prefix): no chunk's.
constexpr const char* kAnchor = "anchor";
// Opening an anchor that its watcher or a sweep is removing at that moment starts again; a few
// times are more than enough.
constexpr int kAnchorAttempts = 100;

// The watcher of a run's partial results on a node (posix/lock_watcher.hpp), with their anchor as
// its standard input: once no process holds the anchor, it removes them all, the anchor last but
// in the same glob ($1 is their common prefix), unless a sweep removed the anchor first.
constexpr const char* kWatcherScript =
    "trap '' TERM INT HUP QUIT USR1 USR2 PIPE; flock -x 0 && "
    "[ \"$(stat -L -c %h /proc/self/fd/0)\" != 0 ] && rm -f -- \"$1\"*";

std::string run_prefix() { return kPrefix + run_identity() + "."; }

// What the names of this run's partial results on this node begin with.
std::string node_prefix() {
  return fmt::format("{}/{}{}.", kFolder, run_prefix(), this_process().host);
}

std::string path_of(const std::string& reduction, std::uint32_t chunk) {
  return fmt::format("{}{}.{}", node_prefix(), reduction, chunk);
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(fmt::format("fiber: a reduction's partial result: {} {}: {}", what, path,
                                       std::strerror(errno)));
}

void lock(int fd, int operation) {
  while (flock(fd, operation) != 0 && errno == EINTR) {
  }
}

void remove_with_prefix(const std::string& prefix) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(kFolder, error)) {
    if (entry.path().string().rfind(prefix, 0) == 0) ::unlink(entry.path().c_str());
  }
}

// This process holds the anchor of the run's partial results on this node (a shared flock, for
// the rest of its life) before it writes one: the first process to need it makes it and starts
// its watcher, which removes them all once no process of the run on the node is left, however
// they ended (the master's SIGKILL included). One that finds it being removed starts again.
void hold_anchor() {
  static std::mutex mutex;
  static bool held = false;  // a forked child shares its parent's lock
  std::lock_guard guard(mutex);
  if (held) return;
  std::string path = node_prefix() + kAnchor;
  for (int attempt = 0; attempt < kAnchorAttempts; ++attempt) {
    bool made = false;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      remove_stale();  // before a run's first on this node, as NodeArray's sweep
      fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0 && errno == EEXIST) continue;
      made = fd >= 0;
    }
    if (fd < 0) fail("cannot open", path);
    lock(fd, LOCK_SH);
    struct stat status {};
    if (fstat(fd, &status) != 0 || status.st_nlink == 0) {  // removed as this process opened it
      ::close(fd);
      continue;
    }
    if (made) posix::start_lock_watcher(fd, kWatcherScript, "fiber-partial-watcher", node_prefix());
    held = true;  // its descriptor stays open until the process ends
    return;
  }
  errno = EAGAIN;
  fail("cannot hold the anchor", path);
}

}  // namespace

void write(const std::string& reduction, std::uint32_t chunk, std::span<const char> value) {
  hold_anchor();
  std::string path = path_of(reduction, chunk);
  std::string temporary = path + ".writing";
  {
    posix::UniqueFd file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (file.get() < 0) fail("cannot create", temporary);
    if (!posix::write_all(file.get(), value)) {
      int error = errno;
      ::unlink(temporary.c_str());
      errno = error;
      fail("cannot write (is /dev/shm full?)", temporary);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot rename to", path);
}

std::optional<Bytes> read(const std::string& reduction, std::uint32_t chunk) {
  std::string path = path_of(reduction, chunk);
  posix::UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("cannot open", path);
  }
  struct stat status {};
  if (fstat(file.get(), &status) != 0) fail("cannot stat", path);
  Bytes value(static_cast<std::size_t>(status.st_size));
  std::size_t done = 0;
  while (done < value.size()) {
    ssize_t n = ::read(file.get(), value.data() + done, value.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done != value.size()) {
    errno = EIO;
    fail("was cut short", path);
  }
  return value;
}

void remove(const std::string& reduction, std::uint32_t chunk) {
  ::unlink(path_of(reduction, chunk).c_str());
}

void remove_all_of_run() { remove_with_prefix(fmt::format("{}/{}", kFolder, run_prefix())); }

void remove_stale() {
  std::error_code error;
  std::string suffix = std::string(".") + kAnchor;
  for (const auto& entry : std::filesystem::directory_iterator(kFolder, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || !name.ends_with(suffix)) continue;
    int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;  // another user's, or gone
    struct stat status {};
    // Nobody holds it: no process of that run is left on this node (its watcher was killed too).
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &status) == 0 && status.st_nlink > 0) {
      std::string path = entry.path().string();
      remove_with_prefix(path.substr(0, path.size() - std::strlen(kAnchor)));
    }
    ::close(fd);
  }
}

}  // namespace fiber::detail::partial_store
