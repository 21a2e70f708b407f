#include "python_task.hpp"

#include <pybind11/pybind11.h>
#include <unistd.h>
#include <fiber/task.hpp>

#include <stdexcept>

namespace py = pybind11;

namespace fiber::python {
namespace {

pid_t interpreter_process = 0;

// The GIL, for one task. fiber forks the task process while the worker's only Python thread
// waits in C++ without the GIL, so the child finds the GIL free; its first task then does what
// os.fork's child does (PyOS_AfterFork_Child: the GIL and the thread states made anew, the
// import lock, os.register_at_fork's child hooks such as random's reseeding).
class TaskGil {
 public:
  TaskGil() : state_(PyGILState_Ensure()) {
    if (getpid() != interpreter_process) {
      PyOS_AfterFork_Child();
      interpreter_process = getpid();
    }
  }
  ~TaskGil() { PyGILState_Release(state_); }
  TaskGil(const TaskGil&) = delete;
  TaskGil& operator=(const TaskGil&) = delete;

 private:
  PyGILState_STATE state_;
};

// Python's error as a C++ one, made while the GIL is held (error_already_set needs it).
[[noreturn]] void rethrow_as_cpp(const py::error_already_set& error) {
  throw std::runtime_error(error.what());
}

}  // namespace

void note_interpreter_process() { interpreter_process = getpid(); }

std::string fiber_python_call(const std::string& call) {
  TaskGil gil;
  try {
    py::bytes outcome = py::module_::import("fiber._calls").attr("run_call")(py::bytes(call));
    return std::string(outcome);
  } catch (const py::error_already_set& error) {
    rethrow_as_cpp(error);
  }
}

void fiber_python_initializer(const std::string& initializer) {
  TaskGil gil;
  try {
    py::module_::import("fiber._calls").attr("run_initializer")(py::bytes(initializer));
  } catch (const py::error_already_set& error) {
    rethrow_as_cpp(error);
  }
}

FIBER_TASK(fiber_python_call);
FIBER_TASK(fiber_python_initializer);

}  // namespace fiber::python
