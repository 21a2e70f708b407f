// What a pool runs on its result-handler thread once a job with callbacks is done: the
// AsyncCallbacks that fit the job's outcome. Not part of the public API.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <type_traits>

#include "fiber/async_result.hpp"
#include "fiber/detail/job.hpp"

namespace fiber::detail {

using JobCallback = std::function<void(const Job&)>;

// Decodes a finished job with `decode` and calls the callback that fits the outcome.
template <class T, class Decode>
void call_back(const AsyncCallbacks<T>& callbacks, Decode decode, const Job& job) {
  std::exception_ptr error;
  if constexpr (std::is_void_v<T>) {
    try {
      decode(job);
    } catch (...) {
      error = std::current_exception();
    }
    if (!error && callbacks.callback) callbacks.callback();
  } else {
    std::optional<T> value;
    try {
      value.emplace(decode(job));
    } catch (...) {
      error = std::current_exception();
    }
    if (value && callbacks.callback) callbacks.callback(*value);
  }
  if (error && callbacks.error_callback) callbacks.error_callback(error);
}

}  // namespace fiber::detail
