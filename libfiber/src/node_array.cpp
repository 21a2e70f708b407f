#include "fiber/node_array.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
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
#include <thread>

#include "fiber/errors.hpp"
#include "run_identity.hpp"
#include "worker.hpp"

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
// How long a process waits for another on its node to fill a segment.
constexpr auto kFillTimeout = 600s;

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

[[noreturn]] void fail(const std::string& what) { throw Error("fiber: NodeArray " + what); }

}  // namespace

std::shared_ptr<SharedSegment> SharedSegment::open(const std::string& name, std::size_t bytes,
                                                   const std::function<void(void*)>& fill) {
  if (name.empty() || name.find('/') != std::string::npos) {
    fail(fmt::format("name '{}' must be non-empty and without '/'", name));
  }
  // One copy per node: the run's and the host's names are part of it (simulated nodes share
  // one /dev/shm).
  std::string shm_name = "/fiber." + run_identity() + "." + this_process().host + "." + name;
  std::size_t total = kHeaderBytes + bytes;

  int fd = shm_open(shm_name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  bool created = fd >= 0;
  if (created) {
    struct statvfs space {};
    if (statvfs("/dev/shm", &space) == 0 &&
        std::uint64_t{space.f_bavail} * space.f_frsize < total) {
      close(fd);
      shm_unlink(shm_name.c_str());
      fail(
          fmt::format("'{}' needs {} in /dev/shm, but only {} are free; enlarge /dev/shm (for "
                      "a container: --shm-size={}m or more)",
                      name, mib(total), mib(std::uint64_t{space.f_bavail} * space.f_frsize),
                      total / (std::size_t{1024} * 1024) + 64));
    }
    // Reserve the pages now: a full tmpfs then fails here, not with SIGBUS on first touch.
    int reserved = posix_fallocate(fd, 0, static_cast<off_t>(total));
    if (reserved != 0) {
      close(fd);
      shm_unlink(shm_name.c_str());
      fail(fmt::format("'{}' needs {} in /dev/shm: {}", name, mib(total), std::strerror(reserved)));
    }
  } else if (errno == EEXIST) {
    fd = shm_open(shm_name.c_str(), O_RDWR, 0600);
  }
  if (fd < 0) fail(fmt::format("'{}': shm_open failed: {}", name, std::strerror(errno)));

  if (!created) {  // wait until the creator has sized it
    auto deadline = std::chrono::steady_clock::now() + kFillTimeout;
    struct stat status {};
    while (fstat(fd, &status) == 0 && static_cast<std::size_t>(status.st_size) < kHeaderBytes) {
      if (std::chrono::steady_clock::now() > deadline) {
        close(fd);
        fail(fmt::format("'{}' was never sized by the process that created it", name));
      }
      std::this_thread::sleep_for(1ms);
    }
    if (static_cast<std::size_t>(status.st_size) != total) {
      close(fd);
      fail(fmt::format("'{}' exists on this node with {} bytes, not {}", name,
                       status.st_size - static_cast<off_t>(kHeaderBytes), bytes));
    }
  }
  void* mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapping == MAP_FAILED) fail(fmt::format("'{}': mmap failed: {}", name, std::strerror(errno)));
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
      std::this_thread::sleep_for(1ms);
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
  std::string prefix = "fiber." + run_identity() + ".";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) == 0) shm_unlink(("/" + file).c_str());
  }
}

void unlink_stale_node_arrays() {
  // A run whose master was killed (SIGKILL, an OOM kill, a node reboot of the master's job step)
  // leaves its segments behind: tmpfs memory nobody frees. Runs are named "<host>-<pid>" after
  // their master, so segments of a run mastered on this host whose master process is gone are
  // garbage.
  std::error_code error;
  std::string prefix = "fiber." + this_process().host + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(prefix, 0) != 0) continue;
    std::size_t digits_end = file.find('.', prefix.size());
    std::string digits = file.substr(prefix.size(), digits_end - prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    pid_t master = static_cast<pid_t>(std::stol(digits));
    if (kill(master, 0) != 0 && errno == ESRCH) shm_unlink(("/" + file).c_str());
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
