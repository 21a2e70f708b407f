"""fiber's pool calls beyond multiprocessing's: size and resize, stats, workers, broadcast,
map_reduce and with_timeout, on real workers."""

import dataclasses
import operator
import os
import threading
import time

import pytest
from conftest import run_program

import fiber

# Long enough that only the deadline ends it.
HANGING_SECONDS = 120
# A deadline that a loaded machine's ordinary tasks never reach.
DEADLINE_SECONDS = 2.0
# An item that keeps a worker busy long enough for every worker of a small pool to take some.
BUSY_SECONDS = 0.2
# How long a test waits to see every worker's task process answer (it polls).
SPREAD_LIMIT_SECONDS = 60

_state = {}


def remember(key, value):
    _state[key] = value


def recall(key):
    return os.getpid(), _state.get(key)


def recall_all(pool, key, processes):
    """(pid, value) of `processes` task processes, from items spread over the pool's workers."""
    seen = {}
    deadline = time.monotonic() + SPREAD_LIMIT_SECONDS
    while len(seen) < processes and time.monotonic() < deadline:
        items = [key] * (4 * processes)
        seen.update(pool.map(lambda k: (time.sleep(BUSY_SECONDS), recall(k))[1], items, 1))
    return seen


def test_size_resize_and_workers_follow_each_other():
    with fiber.Pool(2) as pool:
        assert pool.size() == 2
        pool.resize(3)
        assert pool.size() == 3 == pool.stats().workers
        workers = pool.workers()
        assert len({worker.pid for worker in workers}) == 3
        assert all(isinstance(worker, fiber.WorkerInfo) and worker.host for worker in workers)
        pool.resize(1)
        assert pool.size() == 1
        assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]


def test_resize_refuses_bad_sizes_and_closed_pools():
    with fiber.Pool(1) as pool:
        with pytest.raises(ValueError, match=">= 0"):
            pool.resize(-1)
        with pytest.raises(TypeError, match="int"):
            pool.resize(2.5)
        pool.close()
        with pytest.raises(ValueError, match="not running"):
            pool.resize(2)


def test_stats_are_a_frozen_dataclass_that_counts_items(pool):
    before = pool.stats()
    with pytest.raises(dataclasses.FrozenInstanceError):
        before.crashes = 1
    pool.map(abs, range(10))
    with pytest.raises(ZeroDivisionError):
        pool.apply(operator.truediv, (1, 0))
    after = pool.stats()
    # A task's own exception is an outcome: completed, not failed (fiber's failures are).
    assert after.tasks_completed - before.tasks_completed == 11
    assert after.tasks_failed == before.tasks_failed
    assert after.workers == pool.size() == 2


def test_a_broadcast_reaches_every_task_process_and_replacements(pool):
    pool.broadcast(remember, "generation", 7)
    values = recall_all(pool, "generation", 2)
    assert len(values) == 2 and set(values.values()) == {7}
    with pytest.raises(fiber.WorkerLost):
        pool.apply(os._exit, (1,))  # its replacement replays the broadcast
    assert pool.apply(recall, ("generation",))[1] == 7


def test_a_newcomer_runs_the_latest_broadcast_of_every_function():
    def remember_other(key, value):  # another function: its own latest broadcast
        remember(key, value)

    with fiber.Pool(1) as pool:
        pool.broadcast(remember, "a", 1)
        pool.broadcast(remember_other, "b", 2)
        pool.broadcast(remember, "a", 3)
        pool.resize(2)
        seen_a = recall_all(pool, "a", 2)
        seen_b = recall_all(pool, "b", 2)
        assert set(seen_a.values()) == {3} and set(seen_b.values()) == {2}
        assert len(seen_a) == 2


def test_a_failed_broadcast_fails_later_calls_until_the_next_one():
    with fiber.Pool(1) as pool:
        pool.broadcast(operator.truediv, 1, 0)
        with pytest.raises(fiber.TaskError, match="ZeroDivisionError"):
            pool.apply(abs, (-1,))
        pool.broadcast(remember, "fixed", True)
        assert pool.apply(recall, ("fixed",))[1] is True


def test_map_reduce_folds_in_item_order(pool):
    assert pool.map_reduce(lambda x: x * x, range(100), operator.add) == sum(
        x * x for x in range(100)
    )
    # A concatenation is associative but not commutative: the fold keeps the items' order.
    assert pool.map_reduce(lambda x: [x], range(50), operator.add, chunksize=3) == list(range(50))


def test_map_reduce_folds_in_the_task_processes(pool):
    def with_folder(left, right):
        return left | right | {os.getpid()}

    folders = pool.map_reduce(lambda x: frozenset(), range(20), with_folder)
    assert folders and os.getpid() not in folders  # one node: its value is the master's


def test_map_reduce_raises_the_first_failed_item_or_op(pool):
    with pytest.raises(ZeroDivisionError):
        pool.map_reduce(lambda x: 1 / (x - 5), range(10), operator.add)
    with pytest.raises(TypeError, match="can only concatenate|unsupported operand"):
        pool.map_reduce(lambda x: "a" if x == 3 else x, range(10), operator.add)
    assert pool.map_reduce(abs, [-1, -2], operator.add) == 3


def test_map_reduce_refuses_bad_input(pool):
    with pytest.raises(TypeError, match="empty"):
        pool.map_reduce(abs, [], operator.add)
    with pytest.raises(TypeError, match="op"):
        pool.map_reduce(abs, [1], 5)
    with pytest.raises(ValueError, match="Chunksize"):
        pool.map_reduce(abs, [1], operator.add, chunksize=0)
    with pytest.raises(ValueError, match="task_timeout"):
        pool.map_reduce(fiber.with_timeout(abs, 1), [1], operator.add)


def test_with_timeout_fails_the_item_that_exceeds_it_alone(pool):
    sleepy = fiber.with_timeout(lambda s: time.sleep(s) or s, DEADLINE_SECONDS)
    stream = pool.imap(sleepy, [0, HANGING_SECONDS, 0])
    assert next(stream) == 0
    with pytest.raises(fiber.TimeoutError):
        next(stream)
    assert next(stream) == 0
    with pytest.raises(fiber.TimeoutError):
        pool.apply(sleepy, (HANGING_SECONDS,))
    assert pool.map(sleepy, [0, 0]) == [0, 0]
    assert sleepy(0) == 0  # called directly it has no deadline


def test_with_timeout_refuses_bad_input():
    with pytest.raises(TypeError, match="callable"):
        fiber.with_timeout(5, 1.0)
    with pytest.raises(ValueError, match="> 0"):
        fiber.with_timeout(abs, 0)
    with pytest.raises(TypeError, match="number"):
        fiber.with_timeout(abs, "1")


# map_reduce_async: map_reduce's value as an AsyncResult-like object, its callbacks called once
# it is there, whether or not anyone waits.


def test_map_reduce_async_gets_the_value_and_calls_back(pool):
    called = []
    result = pool.map_reduce_async(
        lambda x: x * x, range(100), operator.add, callback=called.append
    )
    assert result.get(SPREAD_LIMIT_SECONDS) == sum(x * x for x in range(100))
    assert result.ready() and result.successful()
    assert called == [sum(x * x for x in range(100))]
    result.wait(0)  # done: returns at once


def test_map_reduce_async_calls_back_without_a_wait(pool):
    called = threading.Event()
    got = []

    def keep(value):
        got.append(value)
        called.set()

    pool.map_reduce_async(lambda x: [x], range(10), operator.add, chunksize=2, callback=keep)
    assert called.wait(SPREAD_LIMIT_SECONDS)
    assert got == [list(range(10))]


def test_map_reduce_async_fails_with_the_first_failed_item(pool):
    errors = []
    result = pool.map_reduce_async(
        lambda x: 1 / (x - 5), range(10), operator.add, error_callback=errors.append
    )
    result.wait(SPREAD_LIMIT_SECONDS)
    assert result.ready() and not result.successful()
    with pytest.raises(ZeroDivisionError):
        result.get()
    assert len(errors) == 1 and isinstance(errors[0], ZeroDivisionError)


def test_map_reduce_async_times_out_then_gets(pool):
    result = pool.map_reduce_async(lambda s: time.sleep(s) or 1, [BUSY_SECONDS] * 4, operator.add)
    with pytest.raises(fiber.TimeoutError):
        result.get(0.01)
    assert not result.ready()
    with pytest.raises(ValueError, match="not ready"):
        result.successful()
    assert result.get(SPREAD_LIMIT_SECONDS) == 4


def test_map_reduce_async_refuses_bad_input_at_the_call(pool):
    with pytest.raises(TypeError, match="empty"):
        pool.map_reduce_async(abs, [], operator.add)
    with pytest.raises(TypeError, match="op"):
        pool.map_reduce_async(abs, [1], 5)
    with pytest.raises(ValueError, match="Chunksize"):
        pool.map_reduce_async(abs, [1], operator.add, chunksize=0)


def test_map_reduce_async_of_a_terminated_pool_fails():
    with fiber.Pool(1) as own:
        result = own.map_reduce_async(time.sleep, [HANGING_SECONDS] * 2, lambda a, b: None)
        time.sleep(BUSY_SECONDS)
    with pytest.raises(fiber.FiberError):
        result.get(SPREAD_LIMIT_SECONDS)


def test_a_program_may_end_with_a_map_reduce_async_running():
    program = run_program(
        "import time, fiber\n"
        "pool = fiber.Pool(2)\n"
        f"pool.map_reduce_async(time.sleep, [{HANGING_SECONDS}] * 4, lambda a, b: None)\n"
        f"time.sleep({BUSY_SECONDS})\n"
    )
    assert program.returncode == 0, program.stderr


# A quick function's map, a broadcast (the workers take the next map as they answer it), then a
# map and a map_reduce of one slow item per worker, through the workers (FIBER_LANES=0, as on
# every host but the master's): each slow item on a worker of its own. Every Python call runs one
# C++ task; timed together, the quick map made the slow items look short, and all 4 went to the
# first worker to answer (1.2 s instead of 0.3).
SLOW_AFTER_QUICK_PROGRAM = """
import operator, os, time
import fiber

def quick(x):
    return x

def slow(x):
    time.sleep(0.3)
    return [os.getpid()]

with fiber.Pool(4) as pool:
    for _ in range(2):
        pool.map(quick, range(20000))
        pool.broadcast(quick, 0)
        print(len(set(p for [p] in pool.map(slow, range(4)))))
        pool.map(quick, range(20000))
        pool.broadcast(quick, 0)
        print(len(set(pool.map_reduce(slow, range(4), operator.add))))
"""


def test_a_slow_functions_items_go_one_to_a_worker_after_a_quick_functions():
    program = run_program(SLOW_AFTER_QUICK_PROGRAM, env={"FIBER_LANES": "0"})
    assert program.returncode == 0, program.stderr
    assert program.stdout.split() == ["4"] * 4, program.stdout
