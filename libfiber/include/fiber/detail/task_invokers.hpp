// How a worker runs a registered task on encoded bytes: its Invoker (arguments in, result out),
// and for a task R op(R, R) its Combiner (a reduction's two partial results in, one out). Not
// part of the public API.
#pragma once

#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fiber/detail/function_traits.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

// Runs a task: decodes its arguments from `arguments`, appends its encoded result to `result`.
// Throws whatever the task throws.
using Invoker = void (*)(std::span<const char> arguments, Bytes& result);
// Runs a task of two parameters of its result's type on two encoded values (each decoded alone),
// appending the encoded result: how a reduction combines partial results (Pool::map_reduce).
using Combiner = void (*)(std::span<const char> left, std::span<const char> right, Bytes& result);

template <class Parameters>
struct ParameterDecoder;

template <class... Ps>
struct ParameterDecoder<std::tuple<Ps...>> {
  static std::tuple<Ps...> decode(std::span<const char> in) {
    return decode_tuple<Ps...>(in, "the arguments");
  }
};

template <auto Function>
void invoke_task(std::span<const char> arguments, Bytes& result) {
  using Traits = FunctionTraits<decltype(Function)>;
  auto parameters = ParameterDecoder<typename Traits::Parameters>::decode(arguments);
  if constexpr (std::is_void_v<typename Traits::Result>) {
    std::apply(Function, std::move(parameters));
  } else {
    encode_into(result, std::apply(Function, std::move(parameters)));
  }
}

// Whether a task can combine: R op(R, R), by value or const reference.
template <class Traits>
constexpr bool kCombines = [] {
  using R = typename Traits::Result;
  using Parameters = typename Traits::Parameters;
  if constexpr (Traits::kArity != 2 || std::is_void_v<R>) {
    return false;
  } else {
    return std::is_same_v<std::tuple_element_t<0, Parameters>, R> &&
           std::is_same_v<std::tuple_element_t<1, Parameters>, R>;
  }
}();

template <auto Function>
void combine_with_task(std::span<const char> left, std::span<const char> right, Bytes& result) {
  using R = typename FunctionTraits<decltype(Function)>::Result;
  encode_into(result, Function(decode<R>(left, "a partial result of a reduction"),
                               decode<R>(right, "a partial result of a reduction")));
}

// The task's Combiner, or nullptr if it is not of the form R op(R, R).
template <auto Function>
constexpr Combiner combiner_of() {
  if constexpr (kCombines<FunctionTraits<decltype(Function)>>) {
    return &combine_with_task<Function>;
  } else {
    return nullptr;
  }
}

}  // namespace fiber::detail
