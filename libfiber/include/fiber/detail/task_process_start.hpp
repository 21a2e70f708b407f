// What a task process runs first, right after its fork and before it waits for a chunk: the
// Python front end makes the interpreter's after-fork work (PyOS_AfterFork_Child, about a
// millisecond) happen there rather than in the first task, so that a parked worker's standby task
// process has done it before a new pool's initializer comes. Not part of the public API.
#pragma once

#include "fiber/export.hpp"

namespace fiber::detail {

// Sets it (nullptr: nothing); called before the runtime starts, in the process that forks task
// processes (a worker) or an ancestor of it.
FIBER_EXPORT void set_task_process_start(void (*start)());

}  // namespace fiber::detail
