#include "python_task.hpp"

#include <pybind11/pybind11.h>
#include <unistd.h>
#include <fiber/task.hpp>

#include <stdexcept>
#include <utility>

#include "frames.hpp"

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

// fiber._calls.`function`(make_argument()), called holding the task's GIL (TaskGil), which must
// outlive the result; Python's error becomes a C++ one, made while the GIL is held
// (error_already_set needs it).
template <class MakeArgument>
py::object call_in_python(const char* function, MakeArgument make_argument) {
  try {
    return py::module_::import("fiber._calls").attr(function)(make_argument());
  } catch (const py::error_already_set& error) {
    throw std::runtime_error(error.what());
  }
}

}  // namespace

void note_interpreter_process() { interpreter_process = getpid(); }

std::string fiber_python_call(std::string call) {
  TaskGil gil;
  py::object outcome = call_in_python("run_call", [&] { return split_frames(std::move(call)); });
  return join_frames(outcome);
}

void fiber_python_initializer(const std::string& initializer) {
  TaskGil gil;
  call_in_python("run_initializer", [&] { return py::bytes(initializer); });
}

FIBER_TASK(fiber_python_call);
FIBER_TASK(fiber_python_initializer);

}  // namespace fiber::python
