#include "python_task.hpp"

#include <pybind11/pybind11.h>
#include <unistd.h>
#include <fiber/detail/task_process_start.hpp>
#include <fiber/task.hpp>

#include <stdexcept>
#include <utility>

#include "frames.hpp"

namespace py = pybind11;

namespace fiber::python {
namespace {

pid_t interpreter_process = 0;

// The GIL, for one task. fiber forks the task process while the worker's only Python thread
// waits in C++ without the GIL, so the child finds the GIL free; it then does at once (its start,
// note_interpreter_process) what os.fork's child does (PyOS_AfterFork_Child: the GIL and the thread
// states made anew, the import lock, os.register_at_fork's child hooks such as random's reseeding).
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

// `module`.`function`, looked up once per process: a task process runs thousands of calls, and an
// import by name costs microseconds each. Used with the GIL held; kept for the process's life
// (never released: a task process ends with _exit, and static destructors would run after the
// interpreter's end).
class PythonFunction {
 public:
  PythonFunction(const char* module, const char* function) : module_(module), name_(function) {}

  // function(arguments...), holding the task's GIL (TaskGil), which must outlive the result;
  // Python's error becomes a C++ one, made while the GIL is held (error_already_set needs it).
  template <class... Arguments>
  py::object operator()(Arguments&&... arguments) {
    try {
      if (!function_) {
        function_ = py::object(py::module_::import(module_).attr(name_)).release().ptr();
      }
      return py::reinterpret_borrow<py::object>(function_)(std::forward<Arguments>(arguments)...);
    } catch (const py::error_already_set& error) {
      throw std::runtime_error(error.what());
    }
  }

 private:
  const char* module_;
  const char* name_;
  PyObject* function_ = nullptr;
};

}  // namespace

void note_interpreter_process() {
  interpreter_process = getpid();
  // A task process starts its interpreter at once (TaskGil), before its first task comes.
  fiber::detail::set_task_process_start([] {
    TaskGil started;
    static PythonFunction warm_up("fiber._calls", "warm_up");
    try {
      warm_up();
    } catch (const std::exception&) {  // only slower: the initializer does the same and reports
    }
  });
}

std::string fiber_python_call(std::string call) {
  TaskGil gil;
  static PythonFunction run_call("fiber._calls", "run_call");
  return join_frames(run_call(split_frames(std::move(call))));
}

void fiber_python_initializer(const std::string& initializer) {
  TaskGil gil;
  static PythonFunction run_initializer("fiber._calls", "run_initializer");
  run_initializer(py::bytes(initializer));
}

void fiber_python_process(const std::string& process) {
  TaskGil gil;
  static PythonFunction run_in_child("fiber.process", "run_in_child");
  run_in_child(py::bytes(process));
}

void fiber_python_broadcast(const std::string& broadcast) {
  TaskGil gil;
  static PythonFunction run("fiber._broadcasts", "run");
  run(py::bytes(broadcast));
}

std::string fiber_python_reduce_item(const std::string& call) {
  TaskGil gil;
  static PythonFunction run_item("fiber._reductions", "run_item");
  return std::string(py::bytes(run_item(py::bytes(call))));
}

std::string fiber_python_combine(const std::string& left, const std::string& right) {
  TaskGil gil;  // in the master too: its caller waits for the reduction without the GIL
  static PythonFunction combine("fiber._reductions", "combine");
  return std::string(py::bytes(combine(py::bytes(left), py::bytes(right))));
}

FIBER_TASK(fiber_python_call);
FIBER_TASK(fiber_python_initializer);
FIBER_TASK(fiber_python_process);
FIBER_TASK(fiber_python_broadcast);
FIBER_TASK(fiber_python_reduce_item);
FIBER_TASK(fiber_python_combine);

}  // namespace fiber::python
