// The C++ tasks that run Python in a task process: a call (cloudpickled function, args and
// kwargs in, the pickled outcome out, each as frames: frames.hpp, fiber/_calls.py), a pool's
// initializer, a Process, a broadcast (fiber/_broadcasts.py), and a map_reduce's items and
// operation (fiber/_reductions.py). Registered when the extension loads, in the master and in
// every worker alike.
#pragma once

#include <string>

namespace fiber::python {

// fiber._calls.run_call(call's frames): the outcome's, a raised exception included. By value:
// the decoded call is moved in, and its frames reach Python without a copy.
std::string fiber_python_call(std::string call);
// fiber._calls.run_initializer(initializer): the master's context, then the user's initializer;
// throws (the pool's calls then fail with fiber.TaskError) if it raised.
void fiber_python_initializer(const std::string& initializer);
// fiber.process.run_in_child(process): a fiber.Process's run() in the master's context; throws
// (exitcode 1) if run() raised, ends the task process with _exit(N) for sys.exit(N), N > 1.
void fiber_python_process(const std::string& process);
// fiber._broadcasts.run(broadcast): the pool's broadcasts this task process has not run.
void fiber_python_broadcast(const std::string& broadcast);
// fiber._reductions.run_item(call): a map_reduce item's partial result (its outcome and the
// operation that folds it).
std::string fiber_python_reduce_item(const std::string& call);
// fiber._reductions.combine(left, right): two partial results folded into one, where the C++
// reduction folds them (task processes, and the master for the nodes' values).
std::string fiber_python_combine(const std::string& left, const std::string& right);

// Records this process as the one whose interpreter is sound: another (a task process, which
// fiber forks from the worker in C++, not through os.fork) repairs the interpreter as os.fork's
// child does, as soon as it starts. Called when the extension loads.
void note_interpreter_process();

}  // namespace fiber::python
