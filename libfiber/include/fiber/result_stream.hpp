// The result of Pool::imap / imap_unordered: results as they arrive, in item order (imap) or in
// completion order (imap_unordered). An item whose task threw throws when it is reached.
//
//   for (double r : pool.imap_unordered(rollout, seeds)) { ... }
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>

#include "fiber/detail/job.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

template <class T>
class ResultStream {
 public:
  enum class Order { submission, completion };

  ResultStream(std::shared_ptr<detail::Job> job, Order order)
      : job_(std::move(job)), order_(order) {}

  std::size_t size() const { return job_->size(); }

  // The next result, or nothing when every item has been taken.
  std::optional<T> next() {
    if (taken_ == job_->size()) return std::nullopt;
    std::size_t index = taken_;
    if (order_ == Order::submission) {
      job_->wait_item(index, std::nullopt);
    } else {
      index = *job_->wait_next_completed(taken_, std::nullopt);
    }
    ++taken_;
    return job_->decoded_result<T>(index);
  }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    iterator() = default;
    explicit iterator(ResultStream* stream) : stream_(stream) { advance(); }

    const T& operator*() const { return *current_; }
    const T* operator->() const { return &*current_; }
    iterator& operator++() {
      advance();
      return *this;
    }
    void operator++(int) { advance(); }
    bool operator==(const iterator& other) const { return stream_ == other.stream_; }

   private:
    void advance() {
      current_ = stream_->next();
      if (!current_) stream_ = nullptr;
    }
    ResultStream* stream_ = nullptr;
    std::optional<T> current_;
  };

  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

 private:
  std::shared_ptr<detail::Job> job_;
  Order order_;
  std::size_t taken_ = 0;
};

}  // namespace fiber
