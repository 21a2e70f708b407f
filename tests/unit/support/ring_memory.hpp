// A task ring (task_ring.hpp) in its own shared mapping, as the worker makes one before a fork.
#pragma once

#include <cstddef>
#include <stdexcept>

#include "posix/mapped_region.hpp"
#include "shm/task_ring.hpp"

namespace fiber::unit {

struct SharedRing {
  explicit SharedRing(std::size_t capacity) : memory(map(capacity)), ring(memory.data(), capacity) {
    ring.reset();
  }
  static posix::MappedRegion map(std::size_t capacity) {
    auto region =
        posix::MappedRegion::shared_anonymous(detail::task_ring::Ring::footprint(capacity));
    if (!region) throw std::runtime_error("mmap failed");
    return std::move(*region);
  }
  posix::MappedRegion memory;
  detail::task_ring::Ring ring;
};

}  // namespace fiber::unit
