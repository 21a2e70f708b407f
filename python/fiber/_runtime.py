"""The master's fiber runtime: started by the first Pool (MPI_Init inside the extension, as a
C++ program's fiber::Runtime does), ended at exit after the pools still open are terminated, so
that a program that never closes its pools leaves no process behind."""

import atexit
import os
import sys
import threading
import weakref

from fiber import _fiber
from fiber.exceptions import NotSupportedOnCluster, PoolClosed

# Workers run this script with the master's interpreter, never the user's script.
_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")

_lock = threading.Lock()
_started = False
# The exit has begun ending fiber (_end): the pools' waits that fail from now on failed by it.
_ending = False
_pools = weakref.WeakSet()
_processes = weakref.WeakSet()
# A worker's task process: the master's objects reach it as arguments, none are made there.
_in_worker = False


def start(what="a Pool"):
    """Starts the runtime for `what` (a Pool, a Process, a Queue ...), which only the master
    makes: in a worker it raises NotSupportedOnCluster instead of starting a second MPI job."""
    global _started
    if _in_worker:
        raise NotSupportedOnCluster(
            f"fiber: {what} is made in the master (the process that runs your script), not in a "
            "Process or a pool task: make it there and pass it as an argument"
        )
    with _lock:
        if _started:
            return
        _fiber.start_runtime(sys.argv or [sys.executable], sys.executable, [_WORKER_SCRIPT])
        _started = True
        atexit.register(_end)


def track(pool):
    """`pool` is terminated at exit if it is still open then."""
    _pools.add(pool)


def mark_worker():
    """This process is a worker (fiber/_worker.py), and so are the task processes it forks."""
    global _in_worker
    _in_worker = True


def track_process(process):
    """`process` is joined at exit (terminated if daemonic), as multiprocessing's children."""
    _processes.add(process)


def hold_if_ended_by_exit(error):
    """Called where a pool's wait failed with `error`: if the exit ended the pool (PoolClosed after
    _end began) and this is not the main thread, waits here until the process ends, silently, as
    a daemon thread inside a multiprocessing pool's call does at exit (its results never come),
    rather than printing the thread's traceback in the middle of the exit."""
    if (
        _ending
        and isinstance(error, PoolClosed)
        and threading.current_thread() is not threading.main_thread()
    ):
        threading.Event().wait()


def _end():
    global _ending
    _ending = True
    # After Ctrl-C, which a terminal sends to multiprocessing's children too (they share its
    # process group), fiber's children are terminated rather than waited for.
    interrupted = getattr(sys, "last_type", None) is KeyboardInterrupt
    try:
        # As multiprocessing's exit: daemonic children terminated, the others waited for.
        for process in list(_processes):
            if process.daemon or interrupted:
                process.end_at_exit(wait=False)
        for process in list(_processes):
            process.end_at_exit(wait=True)
    finally:
        for process in list(_processes):  # left by a Ctrl-C during the joins
            process.end_at_exit(wait=False)
        for pool in list(_pools):
            pool.terminate()
        _fiber.end_runtime()
