// The two C++ tasks that run Python in a task process: a call (cloudpickled function, args and
// kwargs in, the pickled outcome out, each as frames: frames.hpp, fiber/_calls.py) and a pool's
// initializer. Registered
// when the extension loads, in the master and in every worker alike.
#pragma once

#include <string>

namespace fiber::python {

// fiber._calls.run_call(call's frames): the outcome's, a raised exception included. By value:
// the decoded call is moved in, and its frames reach Python without a copy.
std::string fiber_python_call(std::string call);
// fiber._calls.run_initializer(initializer): the master's context, then the user's initializer;
// throws (the pool's calls then fail with fiber.TaskError) if it raised.
void fiber_python_initializer(const std::string& initializer);

// Records this process as the one whose interpreter is sound: a task that runs in another
// (a task process, which fiber forks from the worker in C++, not through os.fork) first repairs
// the interpreter as os.fork's child does. Called when the extension loads.
void note_interpreter_process();

}  // namespace fiber::python
