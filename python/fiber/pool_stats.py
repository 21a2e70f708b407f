"""What a fiber.Pool says about itself: its counters (fiber::PoolStats) and its workers
(fiber::WorkerInfo), as immutable values that can be compared, printed and pickled."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class PoolStats:
    """pool.stats(): counters of one pool since its start, as the C++ pool counts them."""

    workers: int  # workers the pool holds now
    parked_workers: int  # workers of the runtime that no pool holds
    # Items with an outcome: a value or the task's own exception (which travels as an outcome).
    tasks_completed: int
    tasks_failed: int  # items that ended in fiber's error (WorkerLost, TimeoutError)
    tasks_retried: int  # items sent again after a crash, a timeout or a lost worker
    crashes: int  # task processes that died running an item
    timeouts: int  # items killed at their deadline
    workers_lost: int  # workers taken for dead


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """One of pool.workers(): where a worker runs (its task processes are its children)."""

    id: int
    host: str
    pid: int
