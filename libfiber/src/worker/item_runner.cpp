#include "worker/item_runner.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <typeinfo>

#include "queue/feeder.hpp"
#include "wire/item_record.hpp"

namespace fiber::detail {
namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && readable ? readable.get() : name;
}

}  // namespace

std::string unknown_task_message(std::string_view name) {
  std::string task(name);
  return "no task named '" + task + "' is registered in this worker; register it with FIBER_TASK(" +
         task + ") at namespace scope, before fiber::Runtime starts";
}

std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  return type ? demangle(type->name()) : "unknown exception";
}

void ItemRunner::run(const RunBody& run, std::uint32_t index, Bytes& out) {
  ItemRecordWriter record(out);
  const Invoker* invoker = lookup(run.task());
  if (!invoker) {
    record.fail("fiber::UnknownTask", unknown_task_message(run.task()));
  } else {
    try {
      (*invoker)(run.item(index), out);
      Feeder::settle_this_process();  // the task's puts are in their queues before its result
    } catch (const std::exception& error) {
      record.fail(current_exception_type(), error.what());
    } catch (...) {
      record.fail(current_exception_type(), "(not a std::exception)");
    }
  }
  record.finish();
}

const Invoker* ItemRunner::lookup(std::string_view name) {
  if (name != cached_name_) {
    cached_name_ = name;
    cached_ = find_invoker(name);
  }
  return cached_;
}

}  // namespace fiber::detail
