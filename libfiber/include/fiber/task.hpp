/// \file
/// Tasks: free functions registered by name, so a task message carries a name and argument bytes,
/// never a pointer. Master and workers run the same binary, so both sides know the same names.
///
///   double rollout(std::uint64_t seed, int steps);
///   FIBER_TASK(rollout);                  // at namespace scope, after the function
///
/// A task's parameters and result can be any types fiber/serialization.hpp can encode. Non-const
/// reference parameters are not allowed (a task has no way to send them back).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "fiber/detail/call_encoding.hpp"
#include "fiber/detail/task_invokers.hpp"
#include "fiber/detail/task_of.hpp"
#include "fiber/detail/task_registry.hpp"
#include "fiber/serialization.hpp"

namespace fiber {

/// Registers a task after start-up. The master can call it, but workers started before the call
/// do not know it: their answer is a fiber::TaskError naming the task. Prefer FIBER_TASK.
template <auto Function>
void register_task(std::string_view name) {
  detail::TaskRegistrar(name, detail::address_of(Function), &detail::invoke_task<Function>,
                        detail::combiner_of<Function>());
}

/// A task by name with its signature, for calling a task that this process did not register
/// (e.g. one that only the workers' build has). Pools accept it wherever they accept a function.
template <class Signature>
struct Task;

/// A task by name with its signature R(Args...), for calling a task that this process did not
/// register (e.g. one that only the workers' build has): fiber::Task<double(int)>{"rollout"}.
/// Pools accept it wherever they accept a function.
template <class R, class... Args>
struct Task<R(Args...)> {
  /// The function type a registered task of this signature has.
  using Function = R (*)(Args...);
  /// The name the task was registered under (FIBER_TASK's argument).
  std::string name;
};

/// A task with a deadline per item: pool.map(fiber::with_timeout(rollout, 5s), seeds). An item
/// running longer is killed and retried, then fails with fiber::TimeoutError (pools with
/// Isolation::process only).
template <class F>
struct TimedTask {
  /// The task: a registered function or a fiber::Task handle.
  F task;
  /// The deadline of each item.
  std::chrono::milliseconds timeout;
};

/// `task` with a deadline of `timeout` per item, for any Pool call (see TimedTask).
template <class F, class Rep, class Period>
TimedTask<std::decay_t<F>> with_timeout(const F& task, std::chrono::duration<Rep, Period> timeout) {
  return {task, std::chrono::duration_cast<std::chrono::milliseconds>(timeout)};
}

/// A task whose run times are learnt under `timing` instead of its name: fiber's automatic chunk
/// sizes and how many chunks a worker may hold ahead come from them. For a task that runs other
/// work by its arguments (an interpreter's entry point: Python's front end runs every Python
/// function through one task), so that a quick kind of call does not make a slow one look short:
/// pool.map(fiber::timed_as(run_script, "simulate"), inputs).
template <class F>
struct TimingNamedTask {
  /// The task: a registered function, a fiber::Task handle or a fiber::TimedTask.
  F task;
  /// The name its run times are learnt under.
  std::string timing;
};

/// `task` with its run times learnt under `timing`, for any Pool call (see TimingNamedTask).
template <class F>
TimingNamedTask<std::decay_t<F>> timed_as(const F& task, std::string timing) {
  return {task, std::move(timing)};
}

/// A task call bound to its arguments, e.g. a pool's initializer: fiber::call(seed_rng, 42).
struct Call {
  /// The task's registered name.
  std::string task;
  /// Its arguments, encoded as the task's parameter types.
  Bytes arguments;
};

/// Binds the registered task `f` to `args` (converted to its parameter types): a Call to pass as
/// PoolOptions::initializer.
template <class F, class... Args>
Call call(const F& f, Args&&... args) {
  Call bound{detail::task_name(f), {}};
  detail::encode_call<F>(bound.arguments, std::forward<Args>(args)...);
  return bound;
}

}  // namespace fiber

/// Registers the free function `function` as a task under its name as written.
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a function's name, not an expression
#define FIBER_TASK(function)                                                                       \
  namespace {                                                                                      \
  const ::fiber::detail::TaskRegistrar FIBER_DETAIL_CONCAT(fiber_task_registrar_, __LINE__){       \
      #function, ::fiber::detail::address_of(&function), &::fiber::detail::invoke_task<&function>, \
      ::fiber::detail::combiner_of<&function>()};                                                  \
  }                                                                                                \
  static_assert(true, "")
// NOLINTEND(bugprone-macro-parentheses)
