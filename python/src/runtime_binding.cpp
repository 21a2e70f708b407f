#include "runtime_binding.hpp"

#include <pybind11/stl.h>
#include <fiber/runtime.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "python_pool.hpp"

namespace py = pybind11;

namespace fiber::python {
namespace {

// Exit status of a worker module started by hand rather than by a master's pool.
constexpr int kNotSpawnedExit = 2;

// The master's runtime. Not a static object: it must end while the interpreter still runs (at
// exit, from fiber/_runtime.py), never among C++'s static destructors.
Runtime* master_runtime = nullptr;

// argv for MPI_Init, kept for the life of the process as MPI may keep it.
char** lasting_argv(const std::vector<std::string>& arguments) {
  static std::vector<std::string> kept;
  static std::vector<char*> pointers;
  kept = arguments;
  pointers.clear();
  for (auto& argument : kept) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  return pointers.data();
}

void start_runtime(const std::vector<std::string>& argv, const std::string& worker_program,
                   const std::vector<std::string>& worker_arguments) {
  if (master_runtime) return;
  char** kept = lasting_argv(argv);
  py::gil_scoped_release unlocked;  // MPI_Init and the first spawn take a while
  master_runtime =
      new Runtime(static_cast<int>(argv.size()), kept,
                  {.worker_program = worker_program, .worker_arguments = worker_arguments});
}

void end_runtime() {
  if (!master_runtime) return;
  py::gil_scoped_release unlocked;  // the runtime's threads may wait for the GIL meanwhile
  PythonPool::end_all();            // before the runtime: a pool must not end beside it
  delete master_runtime;
  master_runtime = nullptr;
}

[[noreturn]] void serve_as_worker(const std::vector<std::string>& argv) {
  char** kept = lasting_argv(argv);
  {
    // Without the GIL: the task processes forked from here find it free (python_task.cpp).
    py::gil_scoped_release unlocked;
    Runtime worker(static_cast<int>(argv.size()), kept);  // a spawned worker never returns
  }
  std::fprintf(stderr,
               "fiber: fiber/_worker.py is started by a master's fiber.Pool, not by hand\n");
  std::exit(kNotSpawnedExit);
}

}  // namespace

void bind_runtime(py::module_& module) {
  module.def("start_runtime", &start_runtime, py::arg("argv"), py::arg("worker_program"),
             py::arg("worker_arguments"),
             "Starts the master's runtime (MPI), once; workers run worker_program with "
             "worker_arguments.");
  module.def("end_runtime", &end_runtime,
             "Ends the master's runtime: its workers exit, MPI finalizes.");
  module.def("serve_as_worker", &serve_as_worker, py::arg("argv"),
             "A spawned worker's loop: serves tasks until the master's runtime ends, then exits.");
}

}  // namespace fiber::python
