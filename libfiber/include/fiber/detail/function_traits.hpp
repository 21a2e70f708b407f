// What a task function's type says: its result and its parameters (as values). Not part of the
// public API.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

namespace fiber::detail {

template <class Function>
struct FunctionTraits;

template <class R, class... Args>
struct FunctionTraits<R (*)(Args...)> {
  using Result = R;
  using Parameters = std::tuple<std::remove_cvref_t<Args>...>;
  static constexpr std::size_t kArity = sizeof...(Args);
  static_assert(((!std::is_lvalue_reference_v<Args> ||
                  std::is_const_v<std::remove_reference_t<Args>>)&&...),
                "a fiber task cannot take non-const reference parameters");
};

template <class R, class... Args>
struct FunctionTraits<R (*)(Args...) noexcept> : FunctionTraits<R (*)(Args...)> {};

}  // namespace fiber::detail
