// The tasks of this process by name (libfiber/src/task_registry.cpp): FIBER_TASK and
// register_task add one, the workers and reductions look them up, a pool names a function by
// its registered name. Not part of the public API.
#pragma once

#include <string>
#include <string_view>

#include "fiber/detail/task_invokers.hpp"
#include "fiber/export.hpp"

namespace fiber::detail {

// Registers at static-initialization time; a second task with the same name stops the program
// with a message naming it.
struct FIBER_EXPORT TaskRegistrar {
  TaskRegistrar(std::string_view name, const void* function, Invoker invoker,
                Combiner combiner = nullptr);
};

const Invoker* find_invoker(std::string_view name);
// The combiner of a registered task of the form R op(R, R); nullptr if there is none.
Combiner find_combiner(std::string_view name);
// The registered name of a function, or throws std::invalid_argument naming the function.
FIBER_EXPORT const std::string& task_name_of(const void* function);

template <class Function>
const void* address_of(Function function) {
  return reinterpret_cast<const void*>(function);
}

}  // namespace fiber::detail

// A name unique in its file for FIBER_TASK's registrar: `a` followed by the line's number.
#define FIBER_DETAIL_CONCAT_(a, b) a##b
#define FIBER_DETAIL_CONCAT(a, b) FIBER_DETAIL_CONCAT_(a, b)
