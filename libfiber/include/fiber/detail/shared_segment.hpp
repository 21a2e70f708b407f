// The part of fiber::NodeArray that is not a template (libfiber/src/node_array.cpp). Not part of
// the public API.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "fiber/export.hpp"

namespace fiber::detail {

// A mapped, filled shared segment of `bytes` bytes. `fill` runs in the process that creates it.
class FIBER_EXPORT SharedSegment {
 public:
  static std::shared_ptr<SharedSegment> open(const std::string& name, std::size_t bytes,
                                             const std::function<void(void*)>& fill);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  const void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // Whether this process created (and filled) the node's copy.
  bool created_here() const { return created_; }

  SharedSegment(void* mapping, std::size_t mapped, const void* data, std::size_t bytes,
                bool created)
      : mapping_(mapping), mapped_(mapped), data_(data), bytes_(bytes), created_(created) {}

 private:
  void* mapping_;
  std::size_t mapped_;
  const void* data_;
  std::size_t bytes_;
  bool created_;
};

}  // namespace fiber::detail
