#include "python_errors.hpp"

#include <fiber/errors.hpp>

namespace py = pybind11;

namespace fiber::python {
namespace {

py::object exception_class(const char* name) {
  return py::module_::import("fiber.exceptions").attr(name);
}

}  // namespace

py::object python_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (py::error_already_set& raised) {
    return raised.value();
  } catch (const WorkerLost& lost) {
    py::object exitcode = lost.exitcode() ? py::object(py::int_(*lost.exitcode())) : py::none();
    return exception_class("WorkerLost")(lost.what(), exitcode);
  } catch (const TimeoutError& timeout) {
    return exception_class("TimeoutError")(timeout.what());
  } catch (const PoolClosed& closed) {
    return exception_class("PoolClosed")(closed.what());
  } catch (const SpawnError& spawn) {
    return exception_class("SpawnError")(spawn.what());
  } catch (const TaskError& task) {
    return exception_class("TaskError")(task.what());
  } catch (const Error& other) {
    return exception_class("FiberError")(other.what());
  } catch (const std::exception& other) {
    return py::reinterpret_borrow<py::object>(PyExc_RuntimeError)(other.what());
  }
}

void register_error_translation() {
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const Error&) {
      py::object raised = python_error(error);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(raised.ptr())), raised.ptr());
    }
  });
}

}  // namespace fiber::python
