#include "fiber/detail/task_registry.hpp"

#include <dlfcn.h>

#include <fmt/format.h>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "log.hpp"

namespace fiber::detail {
namespace {

struct Registry {
  std::mutex mutex;  // register_task may run while the dispatcher looks names up
  std::unordered_map<std::string, Invoker> by_name;
  std::unordered_map<std::string, Combiner> combiners;
  std::unordered_map<const void*, std::string> by_address;
};

// A function-local static: registrars run during static initialization, in any order.
Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

TaskRegistrar::TaskRegistrar(std::string_view name, const void* function, Invoker invoker,
                             Combiner combiner) {
  auto& tasks = registry();
  std::lock_guard lock(tasks.mutex);
  auto [it, inserted] = tasks.by_name.emplace(std::string(name), invoker);
  if (!inserted && it->second != invoker) {
    log::error("two different tasks are registered as '{}'; rename one", name);
    std::abort();
  }
  tasks.by_address.emplace(function, std::string(name));
  if (combiner) tasks.combiners.emplace(std::string(name), combiner);
}

const Invoker* find_invoker(std::string_view name) {
  auto& tasks = registry();
  std::lock_guard lock(tasks.mutex);
  auto it = tasks.by_name.find(std::string(name));
  return it == tasks.by_name.end() ? nullptr : &it->second;
}

Combiner find_combiner(std::string_view name) {
  auto& tasks = registry();
  std::lock_guard lock(tasks.mutex);
  auto it = tasks.combiners.find(std::string(name));
  return it == tasks.combiners.end() ? nullptr : it->second;
}

const std::string& task_name_of(const void* function) {
  auto& tasks = registry();
  std::lock_guard lock(tasks.mutex);
  auto it = tasks.by_address.find(function);
  if (it != tasks.by_address.end()) return it->second;
  Dl_info symbol{};
  std::string what = dladdr(function, &symbol) && symbol.dli_sname
                         ? fmt::format("function '{}'", symbol.dli_sname)
                         : fmt::format("the function at {}", fmt::ptr(function));
  throw std::invalid_argument(fmt::format(
      "fiber: {} is not a registered task; add FIBER_TASK(name) after its definition", what));
}

}  // namespace fiber::detail
