// What a pool reads off whatever names a task (a registered function, a fiber::Task<Signature>,
// a fiber::TimedTask, a fiber::TimingNamedTask): its function type, its registered name, its
// timeout, the name its run times are learnt under (empty: its name). Not part of the public API.
#pragma once

#include <chrono>
#include <string>
#include <type_traits>

#include "fiber/detail/function_traits.hpp"
#include "fiber/detail/task_registry.hpp"

namespace fiber {

template <class Signature>
struct Task;  // fiber/task.hpp
template <class F>
struct TimedTask;  // fiber/task.hpp
template <class F>
struct TimingNamedTask;  // fiber/task.hpp

namespace detail {

template <class F>
struct TaskOf {
  using Function = F;
  static std::string name(F function) { return task_name_of(address_of(function)); }
  static std::chrono::milliseconds timeout(F) { return {}; }
  static std::string timing(F) { return {}; }
};

template <class Signature>
struct TaskOf<Task<Signature>> {
  using Function = typename Task<Signature>::Function;
  static std::string name(const Task<Signature>& task) { return task.name; }
  static std::chrono::milliseconds timeout(const Task<Signature>&) { return {}; }
  static std::string timing(const Task<Signature>&) { return {}; }
};

template <class F>
struct TaskOf<TimedTask<F>> {
  using Function = typename TaskOf<F>::Function;
  static std::string name(const TimedTask<F>& timed) { return TaskOf<F>::name(timed.task); }
  static std::chrono::milliseconds timeout(const TimedTask<F>& timed) { return timed.timeout; }
  static std::string timing(const TimedTask<F>& timed) { return TaskOf<F>::timing(timed.task); }
};

template <class F>
struct TaskOf<TimingNamedTask<F>> {
  using Function = typename TaskOf<F>::Function;
  static std::string name(const TimingNamedTask<F>& named) { return TaskOf<F>::name(named.task); }
  static std::chrono::milliseconds timeout(const TimingNamedTask<F>& named) {
    return TaskOf<F>::timeout(named.task);
  }
  static std::string timing(const TimingNamedTask<F>& named) { return named.timing; }
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

template <class F>
std::string timing_of(const F& f) {
  return TaskOf<std::decay_t<F>>::timing(f);
}

}  // namespace detail
}  // namespace fiber
