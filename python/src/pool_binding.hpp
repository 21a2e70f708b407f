// fiber._fiber.Pool and what its calls return (Outcomes, OutcomeStream): fiber::Pool over the
// task fiber_python_call, each item a call's bytes and each result its outcome's bytes
// (fiber/_calls.py encodes and decodes both). Every call that waits releases the GIL.
#pragma once

#include <pybind11/pybind11.h>

namespace fiber::python {

void bind_pool(pybind11::module_& module);

}  // namespace fiber::python
