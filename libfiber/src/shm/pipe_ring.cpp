#include "shm/pipe_ring.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

namespace fiber::detail {
namespace {

// The reader's word, on a cache line of its own before the ring.
constexpr std::size_t kHeader = 64;

}  // namespace

std::size_t PipeRing::size() { return kHeader + task_ring::Ring::footprint(kCapacity); }

PipeRing::PipeRing(posix::MappedRegion region)
    : region_(std::move(region)),
      reader_sleeps_(static_cast<std::atomic<std::uint32_t>*>(region_.data())),
      ring_(static_cast<char*>(region_.data()) + kHeader, kCapacity) {}

std::unique_ptr<PipeRing> PipeRing::create(posix::UniqueFd& fd) {
  fd.reset(::memfd_create("fiber-pipe", MFD_CLOEXEC));
  if (!fd || ::ftruncate(fd.get(), static_cast<off_t>(size())) != 0) return nullptr;
  auto pipe_ring = map(fd.get());
  if (!pipe_ring) return nullptr;
  pipe_ring->ring_.reset();  // the reader's word is 0 already: a new memfd reads as zeros
  return pipe_ring;
}

std::unique_ptr<PipeRing> PipeRing::map(int fd) {
  auto region = posix::MappedRegion::shared_file(fd, size());
  if (!region) return nullptr;
  return std::unique_ptr<PipeRing>(new PipeRing(std::move(*region)));
}

}  // namespace fiber::detail
