// Where a chunk's time goes between the master, its worker and the worker's task process: with
// FIBER_HOP_TRACE set to a directory, each process notes the steady clock at fixed points of a
// chunk's way (tens of nanoseconds each; a test of a flag when unset) and writes them, at its
// end, to DIR/hops-<pid>.csv as "pid,point,chunk,nanoseconds" lines. The processes of one host
// share the clock, so benchmarks/overhead/round_hops.py can put the hops of a chunk side by side
// (docs/design.md, "Where a task's time goes").
#pragma once

#include <cstdint>

namespace fiber::detail::hop_trace {

// In the order a chunk passes them.
enum class Point : std::uint8_t {
  master_sent,       // the master handed the chunk's run entry to MPI
  worker_received,   // its worker took the run message
  worker_forwarded,  // the worker wrote it into its task process's ring (or began it itself)
  task_started,      // the task process read it and starts its first item
  task_ended,        // its last item returned; the records go up next
  worker_answered,   // the worker has the chunk's last record and sends the result
  master_received,   // the master took the result
};

// Whether FIBER_HOP_TRACE was set when the process started (a task process keeps its worker's).
bool enabled();

void note(Point point, std::uint64_t chunk_id);

inline void mark(Point point, std::uint64_t chunk_id) {
  if (enabled()) note(point, chunk_id);
}

// A forked task process starts with none of its worker's marks.
void forget_inherited();

// Appends this process's marks to its file (once; later marks go to a later call).
void write();

}  // namespace fiber::detail::hop_trace
