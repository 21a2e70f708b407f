// A Python iterator of calls' frames as a C++ input range of std::string, each call's frames
// joined (frames.hpp), for fiber::Pool::imap, whose feeder thread reads it lazily: each step takes
// the GIL, and an exception the iterator raises is thrown (as pybind11::error_already_set) at its
// position in the stream.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "frames.hpp"
#include "shared_object.hpp"

namespace fiber::python {

class PythonIteratorRange {
  struct State {
    SharedObject iterator;
    std::optional<std::string> current{};

    void advance() {
      pybind11::gil_scoped_acquire gil;
      PyObject* next = PyIter_Next(iterator.get().ptr());
      if (!next) {
        if (PyErr_Occurred()) throw pybind11::error_already_set();
        current.reset();
        return;
      }
      current = join_frames(pybind11::reinterpret_steal<pybind11::object>(next));
    }
  };

 public:
  // Called with the GIL held.
  explicit PythonIteratorRange(pybind11::iterator items)
      : state_(std::make_shared<State>(State{SharedObject(std::move(items))})) {}

  class iterator {
   public:
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    explicit iterator(State* state) : state_(state) {}
    const std::string& operator*() const { return *state_->current; }
    iterator& operator++() {
      state_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return !state_->current; }

   private:
    State* state_ = nullptr;
  };

  iterator begin() {
    state_->advance();
    return iterator(state_.get());
  }
  std::default_sentinel_t end() const { return {}; }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fiber::python
