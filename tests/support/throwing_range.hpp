// Python's exception_throwing_generator for the ported CPython cases of imap and map
// (pool_imap_lazy_test, pool_cpython_cases_test): an input range that throws at a given item.
#pragma once

#include <cstddef>
#include <iterator>
#include <stdexcept>

namespace fiber_test {

struct SayWhenError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Python's exception_throwing_generator(total, when): 0, 1, ..., total - 1, but SayWhenError
// instead of item `when` (-1: before the first).
class ThrowingRange {
 public:
  ThrowingRange(int total, int when) : total_(total), when_(when) {}

  class iterator {
   public:
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(int at, const ThrowingRange* range) : at_(at), range_(range) { check(); }
    int operator*() const { return at_; }
    iterator& operator++() {
      ++at_;
      check();
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return at_ >= range_->total_; }

   private:
    void check() const {
      if (at_ == range_->when_ && at_ < range_->total_) throw SayWhenError("Somebody said when");
    }
    int at_ = 0;
    const ThrowingRange* range_ = nullptr;
  };

  iterator begin() const {
    if (when_ == -1) throw SayWhenError("Somebody said when");
    return iterator(0, this);
  }
  std::default_sentinel_t end() const { return {}; }

 private:
  int total_;
  int when_;
};

}  // namespace fiber_test
