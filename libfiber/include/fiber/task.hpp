// Tasks: free functions registered by name, so a task message carries a name and argument bytes,
// never a pointer. Master and workers run the same binary, so both sides know the same names.
//
//   double rollout(std::uint64_t seed, int steps);
//   FIBER_TASK(rollout);                  // at namespace scope, after the function
//
// A task's parameters and result can be any types fiber/serialization.hpp can encode. Non-const
// reference parameters are not allowed (a task has no way to send them back).
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "fiber/export.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

namespace detail {

// Runs a task: decodes its arguments from `arguments`, appends its encoded result to `result`.
// Throws whatever the task throws.
using Invoker = void (*)(std::span<const char> arguments, Bytes& result);
// Runs a task of two parameters of its result's type on two encoded values (each decoded alone),
// appending the encoded result: how a reduction combines partial results (Pool::map_reduce).
using Combiner = void (*)(std::span<const char> left, std::span<const char> right, Bytes& result);

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

// Registers at static-initialization time; a second task with the same name stops the program
// with a message naming it.
struct FIBER_EXPORT TaskRegistrar {
  TaskRegistrar(std::string_view name, const void* function, Invoker invoker,
                Combiner combiner = nullptr);
};

const Invoker* find_invoker(std::string_view name);
// The combiner of a registered task of the form R op(R, R); nullptr if there is none.
FIBER_EXPORT Combiner find_combiner(std::string_view name);
// The registered name of a function, or throws std::invalid_argument naming the function.
FIBER_EXPORT const std::string& task_name_of(const void* function);

template <class Function>
const void* address_of(Function function) {
  return reinterpret_cast<const void*>(function);
}

}  // namespace detail

// Registers a task after start-up. The master can call it, but workers started before the call
// do not know it: their answer is a fiber::TaskError naming the task. Prefer FIBER_TASK.
template <auto Function>
void register_task(std::string_view name) {
  detail::TaskRegistrar(name, detail::address_of(Function), &detail::invoke_task<Function>,
                        detail::combiner_of<Function>());
}

// A task by name with its signature, for calling a task that this process did not register
// (e.g. one that only the workers' build has). Pools accept it wherever they accept a function.
template <class Signature>
struct Task;

template <class R, class... Args>
struct Task<R(Args...)> {
  using Function = R (*)(Args...);
  std::string name;
};

// A task with a deadline per item: pool.map(fiber::with_timeout(rollout, 5s), seeds). An item
// running longer is killed and retried, then fails with fiber::TimeoutError (pools with
// Isolation::process only).
template <class F>
struct TimedTask {
  F task;
  std::chrono::milliseconds timeout;
};

template <class F, class Rep, class Period>
TimedTask<std::decay_t<F>> with_timeout(const F& task, std::chrono::duration<Rep, Period> timeout) {
  return {task, std::chrono::duration_cast<std::chrono::milliseconds>(timeout)};
}

namespace detail {

template <class F>
struct TaskOf {
  using Function = F;
  static std::string name(F function) { return task_name_of(address_of(function)); }
  static std::chrono::milliseconds timeout(F) { return {}; }
};

template <class Signature>
struct TaskOf<Task<Signature>> {
  using Function = typename Task<Signature>::Function;
  static std::string name(const Task<Signature>& task) { return task.name; }
  static std::chrono::milliseconds timeout(const Task<Signature>&) { return {}; }
};

template <class F>
struct TaskOf<TimedTask<F>> {
  using Function = typename TaskOf<F>::Function;
  static std::string name(const TimedTask<F>& timed) { return TaskOf<F>::name(timed.task); }
  static std::chrono::milliseconds timeout(const TimedTask<F>& timed) { return timed.timeout; }
};

template <class F>
using FunctionOf = typename TaskOf<std::decay_t<F>>::Function;

template <class F>
using ResultOf = typename FunctionTraits<FunctionOf<F>>::Result;

template <class F>
using ParametersOf = typename FunctionTraits<FunctionOf<F>>::Parameters;

template <class F>
std::string task_name(const F& f) {
  return TaskOf<std::decay_t<F>>::name(f);
}

template <class F>
std::chrono::milliseconds timeout_of(const F& f) {
  return TaskOf<std::decay_t<F>>::timeout(f);
}

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

}  // namespace detail

// A task call bound to its arguments, e.g. a pool's initializer: fiber::call(seed_rng, 42).
struct Call {
  std::string task;
  Bytes arguments;
};

template <class F, class... Args>
Call call(const F& f, Args&&... args) {
  Call bound{detail::task_name(f), {}};
  detail::encode_call<F>(bound.arguments, std::forward<Args>(args)...);
  return bound;
}

}  // namespace fiber

#define FIBER_DETAIL_CONCAT_(a, b) a##b
#define FIBER_DETAIL_CONCAT(a, b) FIBER_DETAIL_CONCAT_(a, b)

// Registers the free function `function` as a task under its name as written.
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a function's name, not an expression
#define FIBER_TASK(function)                                                                       \
  namespace {                                                                                      \
  const ::fiber::detail::TaskRegistrar FIBER_DETAIL_CONCAT(fiber_task_registrar_, __LINE__){       \
      #function, ::fiber::detail::address_of(&function), &::fiber::detail::invoke_task<&function>, \
      ::fiber::detail::combiner_of<&function>()};                                                  \
  }                                                                                                \
  static_assert(true, "")
// NOLINTEND(bugprone-macro-parentheses)
