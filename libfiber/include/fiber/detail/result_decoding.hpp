// How a finished job's results become what an AsyncResult's get() returns: one item's result
// (apply_async), or every item's in order (map, starmap). Not part of the public API.
#pragma once

#include <cstddef>
#include <vector>

#include "fiber/detail/job.hpp"

namespace fiber::detail {

template <class T>
struct ResultDecoder {
  static T single(const Job& job) { return job.decoded_result<T>(0); }
};

template <>
struct ResultDecoder<void> {
  static void single(const Job& job) { job.result(0); }
};

// Decodes all of a job's items in order; throws the first item's error (as map does).
template <class T>
std::vector<T> decode_all(const Job& job) {
  std::vector<T> values;
  values.reserve(job.size());
  for (std::size_t i = 0; i < job.size(); ++i) values.push_back(job.decoded_result<T>(i));
  return values;
}

}  // namespace fiber::detail
