#include "worker/item_runner.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <typeinfo>

#include "queue/feeder.hpp"

namespace fiber::detail {
namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && readable ? readable.get() : name;
}

void append_error(Bytes& out, std::string_view type, std::string_view message) {
  append_string(out, type);
  append_string(out, message);
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

RunBody::RunBody(std::span<const char> body) {
  BodyReader reader(body);
  header_ = reader.raw<RunHeader>();
  auto name = reader.take(header_.name_size);
  task_ = std::string_view(name.data(), name.size());
  offsets_ = reader.take((header_.count + 1) * sizeof(std::uint64_t));
  items_ = body.subspan(reader.position());
}

std::span<const char> RunBody::item(std::uint32_t index) const {
  std::uint64_t begin, end;
  std::memcpy(&begin, offsets_.data() + index * sizeof begin, sizeof begin);
  std::memcpy(&end, offsets_.data() + (index + 1) * sizeof end, sizeof end);
  return items_.subspan(begin, end - begin);
}

void ItemRunner::run(const RunBody& run, std::uint32_t index, Bytes& out) {
  std::size_t record = out.size();
  out.resize(record + sizeof(ItemStatus));
  std::size_t data = out.size();
  ItemStatus status{0, 1};
  const Invoker* invoker = lookup(run.task());
  if (!invoker) {
    status.ok = 0;
    append_error(out, "fiber::UnknownTask", unknown_task_message(run.task()));
  } else {
    try {
      (*invoker)(run.item(index), out);
      Feeder::settle_this_process();  // the task's puts are in their queues before its result
    } catch (const std::exception& error) {
      out.resize(data);
      status.ok = 0;
      append_error(out, current_exception_type(), error.what());
    } catch (...) {
      out.resize(data);
      status.ok = 0;
      append_error(out, current_exception_type(), "(not a std::exception)");
    }
  }
  status.size = out.size() - data;
  std::memcpy(out.data() + record, &status, sizeof status);
}

const Invoker* ItemRunner::lookup(std::string_view name) {
  if (name != cached_name_) {
    cached_name_ = name;
    cached_ = find_invoker(name);
  }
  return cached_;
}

}  // namespace fiber::detail
