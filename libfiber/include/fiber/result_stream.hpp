/// \file
/// The result of Pool::imap / imap_unordered: results as they arrive, in item order (imap) or in
/// completion order (imap_unordered). An item whose task threw throws when it is reached (the
/// stream goes on after it); an exception the input range threw is thrown at its position, after
/// every earlier result, and ends the stream.
///
///   for (double r : pool.imap_unordered(rollout, seeds)) { ... }
///   auto stream = pool.imap(rollout, std::views::iota(0));  // endless: take what you need
///   std::optional<double> r = stream.next(5s);              // fiber::TimeoutError after 5 s
#pragma once

#include <chrono>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>

#include "fiber/detail/input_feed.hpp"
#include "fiber/errors.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

/// Results of Pool::imap or imap_unordered as they arrive (see the file's description): take
/// them with next() or a range-for loop.
template <class T>
class ResultStream {
 public:
  /// Item order (imap) or completion order (imap_unordered).
  using Order = detail::InputFeed::Order;

  /// Made by Pool; not for user code.
  explicit ResultStream(std::shared_ptr<detail::InputFeed> feed) : feed_(std::move(feed)) {}

  /// The next result, or nothing when every item has been taken.
  std::optional<T> next() { return decoded(feed_->next(std::nullopt)); }

  /// As next(), but throws fiber::TimeoutError if no result comes within `timeout`; the stream
  /// is unchanged then, and next() may be called again.
  template <class Rep, class Period>
  std::optional<T> next(std::chrono::duration<Rep, Period> timeout) {
    return decoded(feed_->next(detail::Clock::now() +
                               std::chrono::duration_cast<detail::Clock::duration>(timeout)));
  }

  /// As next(timeout), but a wait that runs out returns false (the stream unchanged) instead of
  /// throwing, so that a caller waiting in slices tells it from an item's own
  /// fiber::TimeoutError (a task killed at its deadline), which next_within throws.
  template <class Rep, class Period>
  bool next_within(std::chrono::duration<Rep, Period> timeout, std::optional<T>& result) {
    std::optional<detail::InputFeed::Item> item;
    try {
      item = feed_->next(detail::Clock::now() +
                         std::chrono::duration_cast<detail::Clock::duration>(timeout));
    } catch (const TimeoutError&) {
      return false;
    }
    result = decoded(item);
    return true;
  }

  /// An input iterator over the results: each step waits for the next one (next()).
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;  ///< single pass
    using value_type = T;                               ///< a result
    using difference_type = std::ptrdiff_t;             ///< as std::input_iterator needs
    using pointer = const T*;                           ///< to the current result
    using reference = const T&;                         ///< to the current result

    iterator() = default;  ///< the end
    /// At the stream's next result (waits for it).
    explicit iterator(ResultStream* stream) : stream_(stream) { advance(); }

    const T& operator*() const { return *current_; }    ///< the current result
    const T* operator->() const { return &*current_; }  ///< the current result
    /// Waits for the next result.
    iterator& operator++() {
      advance();
      return *this;
    }
    void operator++(int) { advance(); }  ///< waits for the next result
    /// Equal to end() once every result was taken.
    bool operator==(const iterator& other) const { return stream_ == other.stream_; }

   private:
    void advance() {
      current_ = stream_->next();
      if (!current_) stream_ = nullptr;
    }
    ResultStream* stream_ = nullptr;
    std::optional<T> current_;
  };

  iterator begin() { return iterator(this); }  ///< waits for the first result
  iterator end() { return iterator(); }        ///< past the last result

 private:
  static std::optional<T> decoded(const std::optional<detail::InputFeed::Item>& item) {
    if (!item) return std::nullopt;
    return item->job->template decoded_result<T>(item->index);
  }

  std::shared_ptr<detail::InputFeed> feed_;
};

}  // namespace fiber
