"""fiber's own Pool options (fiber::PoolOptions): bad values refused at the call, timeouts and
retries as the C++ pool applies them, counted in pool.stats()."""

import math
import os
import time

import pytest
from conftest import run_program

import fiber

# Long enough that only the deadline ends it; short enough that nothing waits for it.
HANGING_SECONDS = 120
# A deadline that a loaded machine's ordinary tasks never reach.
TASK_TIMEOUT_SECONDS = 2.0
# How long the tests wait for a pool to autoscale (they poll: it usually takes a second or so).
SCALING_LIMIT_SECONDS = 60
POLL_SECONDS = 0.1


@pytest.mark.parametrize(
    "options, error",
    [
        ({"max_retries": -1}, ValueError),
        ({"max_retries": 1.5}, TypeError),
        ({"max_retries": True}, TypeError),
        ({"task_timeout": 0}, ValueError),
        ({"task_timeout": -1.0}, ValueError),
        ({"task_timeout": "1"}, TypeError),
        ({"worker_timeout": 0}, ValueError),
        ({"worker_timeout": math.nan}, ValueError),
        ({"worker_timeout": math.inf}, ValueError),
        ({"min_workers": -1}, ValueError),
        ({"min_workers": 3, "max_workers": 2}, ValueError),
        ({"max_workers": "2"}, TypeError),
        ({"scale_down_after": -0.5}, ValueError),
    ],
)
def test_a_bad_option_is_one_clear_error_at_the_call(options, error):
    with pytest.raises(error, match="|".join(options)):
        fiber.Pool(1, **options)


def attempt(folder, item, crashes):
    """Notes an attempt at `item` in `folder`; its first `crashes` attempts end the task process."""
    tries = len([name for name in os.listdir(folder) if name.startswith(f"{item}.")])
    with open(os.path.join(folder, f"{item}.{tries}"), "w"):
        pass
    if tries < crashes:
        os._exit(3)
    return item


def attempts(folder, item):
    return len([name for name in os.listdir(folder) if name.startswith(f"{item}.")])


def test_max_retries_0_fails_a_crashing_item_at_its_first_crash(tmp_path):
    with fiber.Pool(1, max_retries=0) as pool:
        with pytest.raises(fiber.WorkerLost) as lost:
            pool.apply(attempt, (str(tmp_path), 0, 1))
        assert lost.value.exitcode == 3
        assert attempts(tmp_path, 0) == 1
        stats = pool.stats()
        assert (stats.crashes, stats.tasks_retried, stats.tasks_failed) == (1, 0, 1)


def test_max_retries_2_runs_a_crashing_item_three_times_and_others_once(tmp_path):
    with fiber.Pool(2, max_retries=2) as pool:
        before = pool.stats()
        results = pool.map_async(
            lambda item: attempt(str(tmp_path), item, {0: 5, 1: 2}.get(item, 0)), range(4), 1
        )
        with pytest.raises(fiber.WorkerLost):
            results.get()
        assert attempts(tmp_path, 0) == 3  # crashed every time: failed after 2 retries
        assert attempts(tmp_path, 1) == 3  # crashed twice, then returned
        assert pool.apply(attempt, (str(tmp_path), 1, 2)) == 1
        assert [attempts(tmp_path, item) for item in (2, 3)] == [1, 1]
        stats = pool.stats()
        assert stats.crashes - before.crashes == 5
        assert stats.tasks_retried - before.tasks_retried == 4
        assert stats.tasks_failed - before.tasks_failed == 1


def test_task_timeout_kills_the_hanging_item_alone():
    with fiber.Pool(2, task_timeout=TASK_TIMEOUT_SECONDS, max_retries=0) as pool:
        before = pool.stats()
        stream = pool.imap(lambda s: time.sleep(s) or s, [0, HANGING_SECONDS, 0])
        assert next(stream) == 0
        with pytest.raises(fiber.TimeoutError, match="timeout"):
            next(stream)
        assert next(stream) == 0
        stats = pool.stats()
        assert stats.timeouts - before.timeouts == 1
        assert stats.tasks_failed - before.tasks_failed == 1
        assert pool.apply(abs, (-2,)) == 2


def test_a_timed_out_item_is_retried_as_a_crash_is(tmp_path):
    def hang_first(folder):
        if attempts(folder, "hang") == 0:
            attempt(folder, "hang", 0)
            time.sleep(HANGING_SECONDS)
        return "second try"

    with fiber.Pool(1, task_timeout=TASK_TIMEOUT_SECONDS, max_retries=1) as pool:
        assert pool.apply(hang_first, (str(tmp_path),)) == "second try"
        stats = pool.stats()
        assert (stats.timeouts, stats.tasks_retried, stats.tasks_failed) == (1, 1, 0)


def polled(read, done):
    """read() until done(its value) or the scaling limit passes; its last value."""
    deadline = time.monotonic() + SCALING_LIMIT_SECONDS
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        value = read()
    return value


def wait_for_size(pool, size):
    return polled(pool.size, lambda now: now == size)


def wait_for_parked(pool):
    """A shrunk worker counts as parked once its chunks are answered and its lane is given back,
    a moment after the pool's size dropped (on a loaded machine, after the test's next look):
    waited for as the size is."""
    return polled(lambda: pool.stats().parked_workers, lambda parked: parked >= 1)


def wait_for_file(path):
    """A task that holds its worker until the test creates `path` (at most the scaling limit)."""
    return polled(lambda: os.path.exists(path), bool)


def test_an_autoscaling_pool_grows_with_its_backlog_and_shrinks_when_idle(tmp_path):
    flag = str(tmp_path / "go")
    with fiber.Pool(min_workers=1, max_workers=2, scale_down_after=0.5) as pool:
        assert pool.size() == 1
        pending = pool.map_async(wait_for_file, [flag] * 8, 1)  # a backlog until the flag
        assert wait_for_size(pool, 2) == 2
        open(flag, "w").close()
        assert pending.get() == [True] * 8
        assert wait_for_size(pool, 1) == 1
        assert wait_for_parked(pool) >= 1


# A program of its own: a killed worker's MPI process must not share a runtime with later tests.
KILLED_WORKER_PROGRAM = """
import os, signal, time, fiber
with fiber.Pool(2, worker_timeout=2.0) as pool:
    pending = pool.map_async(lambda s: time.sleep(s) or os.getppid(), [3, 3], 1)
    time.sleep(1)
    victim = pool.workers()[0].pid
    os.kill(victim, signal.SIGKILL)
    parents = pending.get()
    stats = pool.stats()
    print(victim in parents, stats.workers_lost, stats.tasks_retried, pool.size())
"""


def test_worker_timeout_takes_a_silent_worker_for_lost_and_runs_its_item_elsewhere():
    finished = run_program(KILLED_WORKER_PROGRAM)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == ["False", "1", "1", "2"]
    assert "stopped answering" in finished.stderr
