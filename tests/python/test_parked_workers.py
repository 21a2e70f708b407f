"""A parked worker (its pool ended) and the next pool: the task process it forks while parked
(its standby, started once it is quiet) runs the next pool's initializer and tasks, fresh; a
standby that died meanwhile is replaced."""

import os
import random
import signal
import time

import fiber

# How long a test waits for the parked workers' standby task processes to appear (it polls:
# they are forked about 10 ms after the park on an idle machine).
STANDBY_LIMIT_SECONDS = 60
POLL_SECONDS = 0.05

_state = {}


def remember(value):
    _state["value"] = value
    return os.getpid()


def recall(_):
    time.sleep(0.2)  # long enough that each worker of a small pool takes one
    return os.getpid(), _state.get("value"), random.random()


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(child) for child in listed.read().split()]
    except OSError:
        return []


def parked_workers_with_standbys(processes):
    """Runs a pool of `processes` that leaves state in its task processes, ends it, and waits
    until each of its (now parked) workers has a standby task process: {worker pid: standby}."""
    with fiber.Pool(processes) as pool:
        used = set(pool.map(remember, ["from the first pool"] * (4 * processes), 1))
        workers = [worker.pid for worker in pool.workers()]
    deadline = time.monotonic() + STANDBY_LIMIT_SECONDS
    standbys = {}
    while time.monotonic() < deadline:
        standbys = {worker: children(worker) for worker in workers}
        if all(len(kids) == 1 and kids[0] not in used for kids in standbys.values()):
            return {worker: kids[0] for worker, kids in standbys.items()}
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"no standby task process in every parked worker: {standbys}")


def test_the_next_pool_runs_in_the_parked_workers_fresh_standby_task_processes():
    standbys = parked_workers_with_standbys(2)
    with fiber.Pool(2) as pool:
        ran = pool.map(recall, range(8), 1)
    assert {pid for pid, _, _ in ran} == set(standbys.values())
    assert {value for _, value, _ in ran} == {None}  # nothing of the first pool's processes
    # Each standby made its interpreter anew after the fork (random reseeded in each).
    first_draws = {}
    for pid, _, draw in ran:
        first_draws.setdefault(pid, draw)
    assert len(set(first_draws.values())) == 2


def test_a_standby_killed_while_parked_is_replaced_by_a_new_task_process():
    standbys = parked_workers_with_standbys(1)
    (killed,) = standbys.values()
    os.kill(killed, signal.SIGKILL)
    with fiber.Pool(1) as pool:
        ran = pool.map(recall, range(2), 1)
        assert pool.stats().crashes == 0
    assert {pid for pid, _, _ in ran} != {killed}
    assert {value for _, value, _ in ran} == {None}
