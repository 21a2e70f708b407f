/// \file
/// fiber::NodeArray<T>: a large read-only array with one copy per node, shared by every process
/// of the job on that node (the master, its workers and their task processes), e.g. the noise
/// table of Evolution Strategies. The first process on a node that opens it creates it and fills
/// it; the others wait for that and map the same memory, zero-copy. Workers that join later
/// (after a resize) map the existing copy.
///
///   void fill_noise(std::span<float> table) { /* deterministic: the same on every node */ }
///   auto noise = fiber::NodeArray<float>::open("noise", 250'000'000, fill_noise);
///   float x = noise[i];  // in the master or in any task
///
/// The copy lives in POSIX shared memory (/dev/shm), named after the run, the node and `name`;
/// the runtime removes it when it ends, and a small watcher process per copy removes it as soon
/// as the last process on that node that mapped it is gone, however it ended (SIGKILL too).
/// Not an MPI shared window: those are collective over a communicator fixed when they are made,
/// and fiber's workers are spawned one by one and later.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "fiber/detail/shared_segment.hpp"

namespace fiber {

/// A read-only array of `T` (trivially copyable) with one copy per node, shared zero-copy by
/// every process of the job there (see the file's description). Copies share the mapping.
template <class T>
class NodeArray {
  static_assert(std::is_trivially_copyable_v<T>, "NodeArray holds plain values");

 public:
  /// Maps the node's copy of `name` with `size` elements, creating and filling it with
  /// fill(std::span<T>) if this process is the node's first. `fill` must give the same content
  /// wherever it runs. Throws fiber::Error if /dev/shm is too small (saying how much it needs),
  /// or if an array of that name exists with another size.
  template <class Fill>
  static NodeArray open(const std::string& name, std::size_t size, Fill fill) {
    auto segment = detail::SharedSegment::open(name, size * sizeof(T), [&](void* memory) {
      fill(std::span<T>(static_cast<T*>(memory), size));
    });
    return NodeArray(std::move(segment), size);
  }

  /// An empty array (size() 0), to assign an opened one to.
  NodeArray() = default;

  /// The whole array.
  std::span<const T> view() const { return {data(), size_}; }
  /// Its first element; null for an empty NodeArray.
  const T* data() const { return static_cast<const T*>(segment_ ? segment_->data() : nullptr); }
  /// Number of elements.
  std::size_t size() const { return size_; }
  /// Element `i`, unchecked.
  const T& operator[](std::size_t i) const { return data()[i]; }
  /// True if this process created and filled the node's copy.
  bool created_here() const { return segment_ && segment_->created_here(); }

 private:
  NodeArray(std::shared_ptr<detail::SharedSegment> segment, std::size_t size)
      : segment_(std::move(segment)), size_(size) {}
  std::shared_ptr<detail::SharedSegment> segment_;
  std::size_t size_ = 0;
};

}  // namespace fiber
