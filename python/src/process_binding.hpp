// fiber._fiber.Process: fiber::Process over the task fiber_python_process, whose one argument is
// the pickled fiber.Process object and the master's context (python/fiber/process.py). Its calls
// take turns (a sentinel's watcher thread joins beside the user's calls); every wait releases the
// GIL and can be interrupted by Ctrl-C.
#pragma once

#include <pybind11/pybind11.h>

namespace fiber::python {

void bind_process(pybind11::module_& module);

}  // namespace fiber::python
