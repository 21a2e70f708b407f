"""The exceptions fiber raises besides a task's own (which are re-raised with their own type)."""

import multiprocessing


class FiberError(Exception):
    """Base of fiber's own errors (fiber::Error in C++)."""


class TimeoutError(FiberError, multiprocessing.TimeoutError):
    """A wait with a timeout ran out; `except multiprocessing.TimeoutError` catches it too."""


class WorkerLost(FiberError):
    """A task's process died (os._exit, a signal) more often than the pool retries it.

    `exitcode` says how the process that ran it last ended, as Process.exitcode: -N killed by
    signal N, N exited with status N; None when the whole worker was lost.
    """

    def __init__(self, message, exitcode=None):
        super().__init__(message)
        self.exitcode = exitcode


class TaskError(FiberError):
    """fiber could not run a task at all (e.g. a pool's initializer raised on a worker)."""


class PoolClosed(FiberError, ValueError):
    """The pool was closed or terminated: as multiprocessing, a ValueError."""


class SpawnError(FiberError):
    """Workers could not be started."""


class NotSupportedOnCluster(FiberError, NotImplementedError):
    """A multiprocessing name that needs memory or a server shared by processes of one machine
    (Lock, Value, Manager ...): fiber's processes may be on other nodes. The message says what to
    use instead."""
