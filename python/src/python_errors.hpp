// fiber's C++ errors as the Python exceptions of fiber.exceptions (fiber.WorkerLost,
// fiber.TimeoutError, ...), for calls that throw and for the error callbacks of async calls.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

namespace fiber::python {

// The Python exception for `error` (fiber's own, a Python error that crossed C++, or another
// C++ exception as RuntimeError). Called with the GIL held.
pybind11::object python_error(std::exception_ptr error);

// Makes pybind11 raise fiber's errors as python_error says.
void register_error_translation();

}  // namespace fiber::python
