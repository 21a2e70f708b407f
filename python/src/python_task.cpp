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

// `module`.`function`(arguments...), called holding the task's GIL (TaskGil), which must outlive
// the result; Python's error becomes a C++ one, made while the GIL is held (error_already_set
// needs it).
template <class... Arguments>
py::object call_in_python(const char* module, const char* function, Arguments&&... arguments) {
  try {
    return py::module_::import(module).attr(function)(std::forward<Arguments>(arguments)...);
  } catch (const py::error_already_set& error) {
    throw std::runtime_error(error.what());
  }
}

}  // namespace

void note_interpreter_process() { interpreter_process = getpid(); }

std::string fiber_python_call(std::string call) {
  TaskGil gil;
  py::object outcome = call_in_python("fiber._calls", "run_call", split_frames(std::move(call)));
  return join_frames(outcome);
}

void fiber_python_initializer(const std::string& initializer) {
  TaskGil gil;
  call_in_python("fiber._calls", "run_initializer", py::bytes(initializer));
}

void fiber_python_process(const std::string& process) {
  TaskGil gil;
  call_in_python("fiber.process", "run_in_child", py::bytes(process));
}

void fiber_python_broadcast(const std::string& broadcast) {
  TaskGil gil;
  call_in_python("fiber._broadcasts", "run", py::bytes(broadcast));
}

std::string fiber_python_reduce_item(const std::string& call) {
  TaskGil gil;
  py::bytes partial = call_in_python("fiber._reductions", "run_item", py::bytes(call));
  return std::string(partial);
}

std::string fiber_python_combine(const std::string& left, const std::string& right) {
  TaskGil gil;  // in the master too: its caller waits for the reduction without the GIL
  py::bytes partial =
      call_in_python("fiber._reductions", "combine", py::bytes(left), py::bytes(right));
  return std::string(partial);
}

FIBER_TASK(fiber_python_call);
FIBER_TASK(fiber_python_initializer);
FIBER_TASK(fiber_python_process);
FIBER_TASK(fiber_python_broadcast);
FIBER_TASK(fiber_python_reduce_item);
FIBER_TASK(fiber_python_combine);

}  // namespace fiber::python
