"""A parked worker (its pool ended) and the next pool: the task process it forks while parked
(its standby, started once it is quiet) runs the next pool's initializer and tasks, fresh; a
standby that died meanwhile is replaced. A pool without an initializer of the user's sends only
the master's context (folder, path, environment), which the standby takes ahead: a next pool
whose context is the same sends no initializer and waits for none; one whose context changed
sends it, to task processes forked anew."""

import os
import random
import signal
import time

import fiber

# How long a test waits for the parked workers' standby task processes to appear (it polls:
# they are forked about 10 ms after the park on an idle machine).
STANDBY_LIMIT_SECONDS = 60
POLL_SECONDS = 0.05
# Long enough for parked workers' standbys to form on an idle machine (10 ms of quiet, a fork).
STANDBY_PAUSE_SECONDS = 0.3

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


def wait_until_dead(pid):
    """Until `pid` (a worker's child) has ended: a zombie its worker has not reaped, or gone."""
    deadline = time.monotonic() + STANDBY_LIMIT_SECONDS
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"process {pid} still runs after SIGKILL")


def parked_workers_with_standbys(processes, ready=lambda standby: True):
    """Runs a pool of `processes` that leaves state in its task processes, ends it, and waits
    until each of its (now parked) workers has a standby task process for which `ready(pid)`
    holds: {worker pid: standby}."""
    with fiber.Pool(processes) as pool:
        used = set(pool.map(remember, ["from the first pool"] * (4 * processes), 1))
        workers = [worker.pid for worker in pool.workers()]
    deadline = time.monotonic() + STANDBY_LIMIT_SECONDS
    standbys = {}
    while time.monotonic() < deadline:
        standbys = {worker: children(worker) for worker in workers}
        if all(len(kids) == 1 and kids[0] not in used and ready(kids[0])
               for kids in standbys.values()):
            return {worker: kids[0] for worker, kids in standbys.items()}
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"no standby task process in every parked worker: {standbys}")


def in_folder(folder):
    """Whether a process's working folder is `folder`: a standby that took the master's context
    ahead is in the master's (its worker stays where it was started)."""
    def ready(pid):
        try:
            return os.readlink(f"/proc/{pid}/cwd") == str(folder)
        except OSError:
            return False
    return ready


def initializer_runs(pool):
    """How many workers ran the pool's initializer for it (sent to them, and waited for by
    Pool()): stats() counts one completed item each, before the pool's first call."""
    return pool.stats().tasks_completed


def context(_):
    time.sleep(0.2)  # long enough that each worker of a small pool takes one
    return os.getpid(), os.getcwd(), os.environ.get("FIBER_TEST_CONTEXT")


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
    wait_until_dead(killed)  # else the next pool may come first: a crash, retried
    with fiber.Pool(1) as pool:
        ran = pool.map(recall, range(2), 1)
        assert pool.stats().crashes == 0
    assert {pid for pid, _, _ in ran} != {killed}
    assert {value for _, value, _ in ran} == {None}


def test_a_pool_with_the_same_context_takes_the_standbys_that_took_it_ahead_unasked(
    tmp_path, monkeypatch
):
    # The workers start elsewhere (any folder but tmp_path); the standbys follow the master's.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FIBER_TEST_CONTEXT", "first")
    standbys = parked_workers_with_standbys(2, in_folder(tmp_path))
    time.sleep(STANDBY_PAUSE_SECONDS)  # the rest of the context, and the workers' word of it
    with fiber.Pool(2) as pool:
        assert initializer_runs(pool) == 0  # nor waited for
        ran = pool.map(context, range(8), 1)
    assert {pid for pid, _, _ in ran} == set(standbys.values())
    assert {(cwd, value) for _, cwd, value in ran} == {(str(tmp_path), "first")}


def test_a_pool_whose_context_changed_sends_it_to_task_processes_forked_anew(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FIBER_TEST_CONTEXT", "first")
    standbys = parked_workers_with_standbys(2, in_folder(tmp_path))
    monkeypatch.setenv("FIBER_TEST_CONTEXT", "second")
    with fiber.Pool(2) as pool:
        assert initializer_runs(pool) == 2
        ran = pool.map(context, range(8), 1)
    assert not {pid for pid, _, _ in ran} & set(standbys.values())  # they ran the old one
    assert {(cwd, value) for _, cwd, value in ran} == {(str(tmp_path), "second")}


def note_initializer(folder):
    with open(os.path.join(folder, f"initializer-{os.getpid()}"), "w"):
        pass


def test_a_users_initializer_is_never_run_ahead(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for _ in range(2):
        with fiber.Pool(2, initializer=note_initializer, initargs=(str(runs),)) as pool:
            assert initializer_runs(pool) == 2
            pool.map(abs, range(4), 1)
        time.sleep(STANDBY_PAUSE_SECONDS)  # the standbys form, and run nothing of the user's
    assert len(list(runs.iterdir())) == 4  # once in each pool's two task processes
