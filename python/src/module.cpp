// fiber._fiber: libfiber for the Python package fiber (python/fiber/). Loading it registers the
// Python tasks, in the master and in every worker.
#include <pybind11/pybind11.h>

#include "frames.hpp"
#include "node_array_binding.hpp"
#include "pool_binding.hpp"
#include "process_binding.hpp"
#include "python_errors.hpp"
#include "python_task.hpp"
#include "queue_binding.hpp"
#include "runtime_binding.hpp"

PYBIND11_MODULE(_fiber, module) {
  module.doc() = "fiber's C++ runtime under the Python package fiber";
  fiber::python::note_interpreter_process();
  fiber::python::register_error_translation();
  fiber::python::bind_runtime(module);
  fiber::python::bind_pool(module);
  fiber::python::bind_process(module);
  fiber::python::bind_queues(module);
  fiber::python::bind_node_array(module);
  fiber::python::bind_frames(module);
}
