"""The master's fiber runtime: started by the first Pool (MPI_Init inside the extension, as a
C++ program's fiber::Runtime does), ended at exit after the pools still open are terminated, so
that a program that never closes its pools leaves no process behind."""

import atexit
import os
import sys
import threading
import weakref

from fiber import _fiber

# Workers run this script with the master's interpreter, never the user's script.
_WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_worker.py")

_lock = threading.Lock()
_started = False
_pools = weakref.WeakSet()


def start():
    global _started
    with _lock:
        if _started:
            return
        _fiber.start_runtime(sys.argv or [sys.executable], sys.executable, [_WORKER_SCRIPT])
        _started = True
        atexit.register(_end)


def track(pool):
    """`pool` is terminated at exit if it is still open then."""
    _pools.add(pool)


def _end():
    for pool in list(_pools):
        pool.terminate()
    _fiber.end_runtime()
