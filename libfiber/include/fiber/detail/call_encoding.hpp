// How a call's arguments become bytes: one call's, converted to the task's parameter types
// (encode_call), and every item's of a map-like call, back to back with their offsets
// (encode_items). Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ranges>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "fiber/detail/task_of.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

// An argument as the task's parameter type P: passed through when it already is one, converted
// otherwise (so apply_async(f, 7, 1000) sends the same bytes as a call with f's exact types).
template <class P, class A>
decltype(auto) as_parameter(A&& argument) {
  if constexpr (std::is_same_v<std::remove_cvref_t<A>, P>) {
    return static_cast<const P&>(argument);
  } else {
    return P(std::forward<A>(argument));
  }
}

template <class F, class... Args>
void encode_call(Bytes& out, Args&&... args) {
  using Parameters = ParametersOf<F>;
  static_assert(std::tuple_size_v<Parameters> == sizeof...(Args),
                "wrong number of arguments for this task");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    encode_into(out,
                as_parameter<std::tuple_element_t<I, Parameters>>(std::forward<Args>(args))...);
  }
  (std::index_sequence_for<Args...>{});
}

// Encodes each item of `items` with `encode_item` into one buffer with offsets.
template <class Range, class EncodeItem>
std::pair<Bytes, std::vector<std::uint64_t>> encode_items(const Range& items,
                                                          EncodeItem encode_item) {
  std::pair<Bytes, std::vector<std::uint64_t>> encoded;
  auto& [bytes, offsets] = encoded;
  if constexpr (std::ranges::sized_range<Range>) offsets.reserve(std::ranges::size(items) + 1);
  offsets.push_back(0);
  for (const auto& item : items) {
    encode_item(bytes, item);
    offsets.push_back(bytes.size());
  }
  return encoded;
}

}  // namespace fiber::detail
