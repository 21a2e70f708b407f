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
    PoolClosed,
    SpawnError,
    TaskError,
    TimeoutError,
    WorkerLost,
)
from fiber.pool import AsyncResult, IMapIterator, Pool
from fiber.node_array import NodeArray
from fiber.pool_stats import PoolStats, WorkerInfo
from fiber.timeouts import with_timeout


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
    "Pool",
    "PoolClosed",
    "SpawnError",
    "TaskError",
    "TimeoutError",
    "WorkerLost",
    "cpu_count",
    "NodeArray",
    "PoolStats",
    "WorkerInfo",
    "with_timeout",
]
