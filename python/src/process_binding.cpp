#include "process_binding.hpp"

#include <pybind11/stl.h>
#include <fiber/process.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "interruptible_wait.hpp"
#include "python_task.hpp"

namespace py = pybind11;

namespace fiber::python {
namespace {

class PythonProcess {
 public:
  // `payload` to run on a worker of that shape (fiber::WorkerShape), after `context`, the master's
  // (fiber/_calls.py, encode_initializer without a user's), which a parked worker's standby may
  // have taken ahead: the payload sets it too, but a standby that took it serves the process
  // instead of a fork (docs/design.md, "Standby task processes").
  PythonProcess(const std::string& payload, const std::string& context, int cores, int gpus,
                std::uint64_t memory_bytes)
      : process_(std::make_unique<Process>(&fiber_python_process, payload)) {
    process_->with_shape({.cores = cores, .memory_bytes = memory_bytes, .gpus = gpus});
    process_->with_initializer(fiber::call(&fiber_python_initializer, context),
                               /*runs_ahead=*/true);
  }
  // The pool inside may wait for the worker: destroyed without the GIL.
  ~PythonProcess() {
    py::gil_scoped_release unlocked;
    process_.reset();
  }
  PythonProcess(const PythonProcess&) = delete;
  PythonProcess& operator=(const PythonProcess&) = delete;

  template <class Call>
  auto in_turn(Call call) {
    py::gil_scoped_release unlocked;
    std::lock_guard turn(mutex_);
    return call(*process_);
  }

  // In slices, each its own turn, so that another thread's call is not held up by a long wait.
  bool join(std::optional<double> timeout) {
    return wait_interruptibly(
        [&](auto slice) {
          std::lock_guard turn(mutex_);
          return process_->join(slice);
        },
        timeout);
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Process> process_;
};

template <class Result, Result (Process::*Method)()>
Result in_turn(PythonProcess& process) {
  return process.in_turn([](Process& turn) { return (turn.*Method)(); });
}

template <class Result, Result (Process::*Method)() const>
Result in_turn_const(PythonProcess& process) {
  return process.in_turn([](Process& turn) { return (turn.*Method)(); });
}

}  // namespace

void bind_process(py::module_& module) {
  py::class_<PythonProcess>(module, "Process",
                            "fiber::Process running a pickled fiber.Process (its run()).")
      .def(py::init<const std::string&, const std::string&, int, int, std::uint64_t>(),
           py::arg("payload"), py::arg("context"), py::arg("cores"), py::arg("gpus"),
           py::arg("memory_bytes"))
      .def("start", &in_turn<void, &Process::start>, "Runs it on a worker (spawned if none).")
      .def("join", &PythonProcess::join, py::arg("timeout"), "True once it has ended.")
      .def("is_alive", &in_turn_const<bool, &Process::is_alive>)
      .def("exitcode", &in_turn_const<std::optional<int>, &Process::exitcode>)
      .def("terminate", &in_turn<void, &Process::terminate>);
}

}  // namespace fiber::python
