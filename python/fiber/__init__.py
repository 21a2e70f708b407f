"""fiber: multiprocessing's Pool on an MPI cluster.

    import fiber as mp

    with mp.Pool(4) as pool:
        print(pool.map(lambda x: x * x, range(10)))

Workers are Python interpreters that fiber's runtime spawns with MPI (MPI_Comm_spawn), each
forking a task process that runs the calls: the user's script is never run again in a worker,
so no `if __name__ == "__main__"` guard is needed. Functions travel by value (cloudpickle).
"""

import os

from fiber.exceptions import (
    FiberError,
    NotSupportedOnCluster,
    PoolClosed,
    SpawnError,
    TaskError,
    TimeoutError,
    WorkerLost,
)
from fiber.pool import AsyncResult, IMapIterator, Pool
from fiber.preemption import PREEMPTED_EXIT, Preempted, deferred_preemption, exit_on_preemption
from fiber.process import Process, active_children, current_process, parent_process
from fiber.queues import JoinableQueue, Queue, SimpleQueue
from fiber.connection import Connection, Pipe
from fiber.start_methods import (
    get_all_start_methods,
    get_context,
    get_start_method,
    set_start_method,
)
from fiber.unsupported import (
    Array,
    Barrier,
    BoundedSemaphore,
    Condition,
    Event,
    Lock,
    Manager,
    RawArray,
    RawValue,
    RLock,
    Semaphore,
    Value,
)
from fiber.pool_stats import PoolStats, WorkerInfo
from fiber.timeouts import with_timeout


def __getattr__(name):
    # NodeArray needs numpy: imported at its first use, so that `import fiber`, which every worker
    # does, loads no BLAS and starts no thread pool before the worker forks its task processes
    # (tests/python/test_task_threads.py).
    if name == "NodeArray":
        from fiber.node_array import NodeArray

        return NodeArray
    raise AttributeError(f"module 'fiber' has no attribute {name!r}")


def cpu_count():
    """This machine's processors, as multiprocessing.cpu_count(); Pool() itself takes one worker
    per processor slot of the job (the allocation's, under a batch system)."""
    count = os.cpu_count()
    if count is None:
        raise NotImplementedError("cannot determine number of cpus")
    return count


__all__ = [
    "AsyncResult",
    "FiberError",
    "IMapIterator",
    "PREEMPTED_EXIT",
    "Pool",
    "PoolClosed",
    "Preempted",
    "SpawnError",
    "TaskError",
    "TimeoutError",
    "WorkerLost",
    "cpu_count",
    "deferred_preemption",
    "exit_on_preemption",
    "NotSupportedOnCluster",
    "Process",
    "active_children",
    "current_process",
    "parent_process",
    "JoinableQueue",
    "Queue",
    "SimpleQueue",
    "Connection",
    "Pipe",
    "get_all_start_methods",
    "get_context",
    "get_start_method",
    "set_start_method",
    "Array",
    "Barrier",
    "BoundedSemaphore",
    "Condition",
    "Event",
    "Lock",
    "Manager",
    "RawArray",
    "RawValue",
    "RLock",
    "Semaphore",
    "Value",
    "NodeArray",
    "PoolStats",
    "WorkerInfo",
    "with_timeout",
]
