// Running the items of a chunk, wherever it runs (in the worker process or in its task process),
// and writing each item's outcome as an item record (wire/item_record.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fiber/serialization.hpp"
#include "fiber/task.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {

// Runs items, remembering the last task looked up (chunks of one task follow each other).
class ItemRunner {
 public:
  // Appends the record of running item `index` of `run` to `out`.
  void run(const RunBody& run, std::uint32_t index, Bytes& out);

 private:
  const Invoker* lookup(std::string_view name);
  std::string cached_name_;
  const Invoker* cached_ = nullptr;
};

// What a worker says of a task name it has no task for.
std::string unknown_task_message(std::string_view name);

// The type name of the exception being handled, whatever its type (e.g. "int" for `throw 42`).
std::string current_exception_type();

}  // namespace fiber::detail
