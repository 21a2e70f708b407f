// A watcher of shared memory on a node: /bin/sh in a session of its own, with one file open as its
// standard input and deaf to the signals a job's end and scancel send first, running a script
// that waits for an exclusive flock on that file (granted once every process that holds a shared
// lock on it has ended, however it ended) and then removes what the file stands for. NodeArray's
// segments (node_array.cpp) and a run's reduction partial results (partial_store.cpp) use it.
#pragma once

#include <string>

namespace fiber::posix {

// Starts `script` (sh -c) with `fd`'s file (opened again: a lock of its own) as its standard
// input, `name` as its $0 and `argument` as its $1. Without /bin/sh nothing is started: the
// callers also remove what they made at a normal end, and sweep what nobody holds.
void start_lock_watcher(int fd, const std::string& script, const std::string& name,
                        const std::string& argument);

}  // namespace fiber::posix
