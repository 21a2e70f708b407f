// Running the items of a chunk, wherever it runs (in the worker process or in its task process):
// parsing a run message's body, and writing each item's outcome as a record
// [ItemStatus][bytes] (the result bytes, or the error: u32 size + type, u32 size + message).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fiber/serialization.hpp"
#include "fiber/task.hpp"
#include "wire/protocol.hpp"

namespace fiber::detail {

// A run message's body, read in place.
class RunBody {
 public:
  explicit RunBody(std::span<const char> body);
  const RunHeader& header() const { return header_; }
  std::string_view task() const { return task_; }
  std::uint32_t count() const { return header_.count; }
  std::span<const char> item(std::uint32_t index) const;

 private:
  RunHeader header_;
  std::string_view task_;
  std::span<const char> offsets_;
  std::span<const char> items_;
};

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
