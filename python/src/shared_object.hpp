// A Python object held by C++ code that other threads may copy and drop (a callback stored in a
// fiber job, a Python iterator read by an imap's feeder thread), which do not hold the GIL: the
// copies share one reference, and the last of them releases it with the GIL taken.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

namespace fiber::python {

class SharedObject {
 public:
  // Called with the GIL held.
  explicit SharedObject(pybind11::object object)
      : object_(new pybind11::object(std::move(object)), release) {}

  // The object; use it with the GIL held.
  const pybind11::object& get() const { return *object_; }

 private:
  static void release(pybind11::object* object) {
    // After the interpreter's end there is nothing left to release (and no GIL to take).
    if (!Py_IsInitialized()) return;
    pybind11::gil_scoped_acquire gil;
    delete object;
  }

  std::shared_ptr<pybind11::object> object_;
};

}  // namespace fiber::python
