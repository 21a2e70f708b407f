// fiber._fiber's runtime functions: the master's fiber::Runtime, started by its first pool and
// ended at exit (fiber/_runtime.py), and a spawned worker's loop (fiber/_worker.py).
#pragma once

#include <pybind11/pybind11.h>

namespace fiber::python {

void bind_runtime(pybind11::module_& module);

}  // namespace fiber::python
