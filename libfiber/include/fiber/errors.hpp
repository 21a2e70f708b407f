/// \file
/// The exceptions fiber throws. Every one derives from fiber::Error (a std::runtime_error), so
/// `catch (const fiber::Error&)` catches them all.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "fiber/export.hpp"

namespace fiber {

class FIBER_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where a task ran: the worker's id in the runtime, its host and its process id.
struct WorkerInfo {
  int id = -1;       ///< the worker's id in the runtime; -1 in the master
  std::string host;  ///< its host name
  long pid = 0;      ///< its process id
};

/// A task threw. `type()` is the exception's type name as the worker saw it (e.g.
/// "std::invalid_argument"), `message()` its what(); `worker()` says where it ran.
class FIBER_EXPORT TaskError : public Error {
 public:
  /// Made by the runtime from a worker's report.
  TaskError(std::string task, std::string type, std::string message, WorkerInfo worker);

  /// The task's registered name.
  const std::string& task() const noexcept { return task_; }
  /// The exception's type name, e.g. "std::invalid_argument".
  const std::string& type() const noexcept { return type_; }
  /// The exception's what().
  const std::string& message() const noexcept { return message_; }
  /// Where it ran.
  const WorkerInfo& worker() const noexcept { return worker_; }

 private:
  std::string task_;
  std::string type_;
  std::string message_;
  WorkerInfo worker_;
};

/// A task crashed its worker more often than the pool allows.
class FIBER_EXPORT WorkerLost : public Error {
 public:
  /// Made by the runtime; `exitcode` as exitcode() returns it.
  explicit WorkerLost(const std::string& message, std::optional<int> exitcode = std::nullopt)
      : Error(message), exitcode_(exitcode) {}

  /// How the task process that ran it last ended, as Python's Process.exitcode: -N killed by
  /// signal N, N exited with status N; empty when the whole worker was lost.
  std::optional<int> exitcode() const noexcept { return exitcode_; }

 private:
  std::optional<int> exitcode_;
};

/// A wait with a timeout ran out (AsyncResult::get(timeout)), or a task passed its deadline.
class FIBER_EXPORT TimeoutError : public Error {
 public:
  using Error::Error;
};

/// The pool was closed or terminated and cannot take this call, or terminated while the task was
/// still pending.
class FIBER_EXPORT PoolClosed : public Error {
 public:
  using Error::Error;
};

/// Bytes did not decode as the types expected of them: a task's result read as another type than
/// the task returns (a fiber::Task<Signature> handle with the wrong result type), or arguments
/// that are not what the task takes.
class FIBER_EXPORT TypeMismatch : public Error {
 public:
  using Error::Error;
};

/// Workers could not be started (e.g. more than the allocation allows without oversubscription).
class FIBER_EXPORT SpawnError : public Error {
 public:
  using Error::Error;
};

}  // namespace fiber
