// The memory of one sender's direct connection to a Pipe's reading process on the same host: a
// task_ring::Ring from the sender to the reader, in a memfd the sender makes and passes over the
// connection's Unix-domain socket (SCM_RIGHTS), so that neither side makes a system call while
// the reader busy-polls; and a word in which the reader says it sleeps in ppoll on its sockets,
// so that the sender then rings (a zero-size frame on the socket). The reader keeps the mapping,
// so what a sender wrote outlives it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "posix/mapped_region.hpp"
#include "posix/unique_fd.hpp"
#include "shm/task_ring.hpp"

namespace fiber::detail {

class PipeRing {
 public:
  // The ring's bytes: frames larger wait for the reader to free room, as a full socket would.
  static constexpr std::size_t kCapacity = std::size_t{1} << 20;

  // A new, empty one; its memfd in `fd` (to pass to the reader). Null if the system refuses.
  static std::unique_ptr<PipeRing> create(posix::UniqueFd& fd);
  // The one a sender made, from the memfd it passed. Null if it cannot be mapped.
  static std::unique_ptr<PipeRing> map(int fd);

  task_ring::Ring& ring() { return ring_; }
  std::atomic<std::uint32_t>& reader_sleeps() { return *reader_sleeps_; }

 private:
  explicit PipeRing(posix::MappedRegion region);
  static std::size_t size();

  posix::MappedRegion region_;
  std::atomic<std::uint32_t>* reader_sleeps_;
  task_ring::Ring ring_;
};

}  // namespace fiber::detail
