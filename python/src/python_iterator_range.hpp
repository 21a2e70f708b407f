// A Python iterator of calls' frames as a C++ input range of std::string, each call's frames
// joined (frames.hpp), for fiber::Pool::imap, whose feeder thread reads it lazily. Each look at
// the iterator takes the GIL, and on the feeder thread (a C++ thread) that makes and deletes a
// Python thread state each time, several microseconds (pybind11's gil_scoped_acquire): so a look
// reads on while the items come quickly, up to kItemsPerLook of them or for kLookFor, and a slow
// iterator is still read an item at a time. An exception the iterator raises is thrown (as
// pybind11::error_already_set) at its position in the stream, after the items read before it.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "frames.hpp"
#include "shared_object.hpp"

namespace fiber::python {

class PythonIteratorRange {
  // At most this many items per look at the iterator, and reading on only this long: the feeder
  // submits what it read once reading took a millisecond (input_feed.cpp), and a look holds the
  // GIL from the caller's thread.
  static constexpr std::size_t kItemsPerLook = 64;
  static constexpr auto kLookFor = std::chrono::microseconds(50);

  struct State {
    SharedObject iterator;
    std::optional<std::string> current{};
    std::deque<std::string> read{};  // read ahead by the last look
    std::exception_ptr raised{};     // what the iterator raised after them
    bool exhausted = false;

    void advance() {
      if (read.empty() && !raised && !exhausted) look();
      if (!read.empty()) {
        current = std::move(read.front());
        read.pop_front();
        return;
      }
      current.reset();
      if (raised) std::rethrow_exception(std::exchange(raised, nullptr));
    }

    void look() {
      pybind11::gil_scoped_acquire gil;
      const auto start = std::chrono::steady_clock::now();
      do {
        try {
          PyObject* next = PyIter_Next(iterator.get().ptr());
          if (!next) {
            if (PyErr_Occurred()) throw pybind11::error_already_set();
            exhausted = true;
            return;
          }
          read.push_back(join_frames(pybind11::reinterpret_steal<pybind11::object>(next)));
        } catch (...) {  // after the items read before it
          raised = std::current_exception();
          return;
        }
      } while (read.size() < kItemsPerLook && std::chrono::steady_clock::now() - start < kLookFor);
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
