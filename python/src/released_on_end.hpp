// A C++ object whose destructor may wait for threads that take the GIL (a pool's end, a stream's
// feeder): destroyed with the GIL released.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

namespace fiber::python {

template <class T>
struct ReleasedOnEnd {
  explicit ReleasedOnEnd(std::unique_ptr<T> owned) : object(std::move(owned)) {}
  ~ReleasedOnEnd() {
    pybind11::gil_scoped_release unlocked;
    object.reset();
  }
  ReleasedOnEnd(const ReleasedOnEnd&) = delete;
  ReleasedOnEnd& operator=(const ReleasedOnEnd&) = delete;
  std::unique_ptr<T> object;
};

}  // namespace fiber::python
