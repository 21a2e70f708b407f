#include "task_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include <fmt/format.h>

#include "fiber/errors.hpp"

namespace fiber::detail {
namespace {

// The progress page's room, before the rings.
constexpr std::size_t kProgressBytes = 4096;
static_assert(sizeof(TaskProgress) <= kProgressBytes);

[[noreturn]] void fail(const std::string& what) {
  throw Error(fmt::format("fiber: cannot {}: {}", what, std::strerror(errno)));
}

}  // namespace

std::size_t TaskMemory::size() {
  return kProgressBytes + 2 * task_ring::Ring::footprint(kTaskRingBytes);
}

TaskMemory::TaskMemory(posix::UniqueFd fd, posix::MappedRegion region)
    : fd_(std::move(fd)), region_(std::move(region)) {
  char* rings = static_cast<char*>(region_.data()) + kProgressBytes;
  down_.emplace(rings, kTaskRingBytes);
  up_.emplace(rings + task_ring::Ring::footprint(kTaskRingBytes), kTaskRingBytes);
}

TaskMemory TaskMemory::create() {
  posix::UniqueFd fd(memfd_create("fiber-task-process", MFD_CLOEXEC));
  if (!fd) fail("create the task process's memory");
  if (ftruncate(fd.get(), static_cast<off_t>(size())) != 0) fail("size the task process's memory");
  auto region = posix::MappedRegion::shared_file(fd.get(), size());
  if (!region) fail("map the task process's memory");
  TaskMemory memory(std::move(fd), std::move(*region));
  new (memory.region_.data()) TaskProgress();
  memory.down_->reset();
  memory.up_->reset();
  return memory;
}

TaskMemory TaskMemory::open(pid_t pid, int fd) {
  std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  posix::UniqueFd opened(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!opened) fail("open " + path);
  struct stat status {};
  if (fstat(opened.get(), &status) != 0) fail("look at " + path);
  if (static_cast<std::size_t>(status.st_size) != size()) {
    throw Error(fmt::format("fiber: {} is not a task process's memory ({} bytes, not {})", path,
                            status.st_size, size()));
  }
  auto region = posix::MappedRegion::shared_file(opened.get(), size());
  if (!region) fail("map " + path);
  return TaskMemory(std::move(opened), std::move(*region));
}

}  // namespace fiber::detail
