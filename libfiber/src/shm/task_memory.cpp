#include "shm/task_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include <fmt/format.h>

#include "fiber/errors.hpp"
#include "posix/proc_descriptor.hpp"

namespace fiber::detail {
namespace {

// The progress page's room, before the rings.
constexpr std::size_t kProgressBytes = 4096;
static_assert(sizeof(TaskProgress) <= kProgressBytes);

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
  if (!fd) posix::throw_errno("create the task process's memory");
  if (ftruncate(fd.get(), static_cast<off_t>(size())) != 0)
    posix::throw_errno("size the task process's memory");
  auto region = posix::MappedRegion::shared_file(fd.get(), size());
  if (!region) posix::throw_errno("map the task process's memory");
  TaskMemory memory(std::move(fd), std::move(*region));
  new (memory.region_.data()) TaskProgress();
  memory.down_->reset();
  memory.up_->reset();
  return memory;
}

TaskMemory TaskMemory::open(pid_t pid, int fd) {
  auto opened = posix::open_descriptor_of(pid, fd, O_RDWR | O_CLOEXEC);
  if (static_cast<std::size_t>(opened.status.st_size) != size()) {
    throw Error(fmt::format("fiber: {} is not a task process's memory ({} bytes, not {})",
                            opened.path, opened.status.st_size, size()));
  }
  auto region = posix::MappedRegion::shared_file(opened.fd.get(), size());
  if (!region) posix::throw_errno("map " + opened.path);
  return TaskMemory(std::move(opened.fd), std::move(*region));
}

}  // namespace fiber::detail
