"""A task that raises, exits or crashes: its error in the caller, and the pool goes on."""

import ctypes
import os
import threading
from multiprocessing.pool import MaybeEncodingError, RemoteTraceback

import pytest

import fiber


class TaskRefused(Exception):
    """An exception class of the user's module: the worker imports it by the master's sys.path."""


def refuse(reason):
    raise TaskRefused(reason)


def test_an_exception_is_raised_with_its_type_and_the_remote_traceback(pool):
    with pytest.raises(TaskRefused, match="no thanks") as raised:
        pool.apply(refuse, ("no thanks",))
    cause = raised.value.__cause__
    assert isinstance(cause, RemoteTraceback)
    assert "in refuse" in str(cause) and 'raise TaskRefused(reason)' in str(cause)


def test_map_raises_the_first_failed_item(pool):
    with pytest.raises(ZeroDivisionError):
        pool.map(lambda x: 1 / x, [1, 0, 2])


def test_an_unpicklable_function_is_an_error_at_the_call(pool):
    lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot pickle"):
        pool.apply(lambda: lock)
    assert pool.apply(abs, (-1,)) == 1


def test_an_unpicklable_result_fails_that_item_alone(pool):
    stream = pool.imap(lambda x: threading.Lock() if x == 1 else x, [0, 1, 2])
    assert next(stream) == 0
    with pytest.raises(MaybeEncodingError, match="cannot pickle"):
        next(stream)
    assert next(stream) == 2


def test_os_exit_in_a_task_is_worker_lost_and_the_pool_goes_on(pool):
    with pytest.raises(fiber.WorkerLost) as lost:
        pool.apply(os._exit, (3,))
    assert lost.value.exitcode == 3
    assert pool.map(abs, [-1, -2]) == [1, 2]


def test_a_segfault_in_a_task_is_worker_lost_with_the_signal(pool):
    with pytest.raises(fiber.WorkerLost) as lost:
        pool.apply(ctypes.string_at, (0,))
    assert lost.value.exitcode == -11
    assert pool.apply(abs, (-5,)) == 5


def test_a_task_that_prints_returns_its_result(pool, capfd):
    assert pool.apply(lambda: print("from a task") or 7) == 7


def crash_with_status(status):
    os._exit(status)


def test_worker_lost_names_the_users_function_not_fibers_task(pool):
    with pytest.raises(fiber.WorkerLost, match="function 'crash_with_status' crashed") as lost:
        pool.apply(crash_with_status, (3,))
    assert "fiber_python_call" not in str(lost.value)
    with pytest.raises(fiber.WorkerLost, match="function 'crash_with_status' crashed"):
        next(pool.imap(crash_with_status, [4]))
    errors = []
    pool.apply_async(crash_with_status, (5,), error_callback=errors.append).wait()
    assert len(errors) == 1 and "function 'crash_with_status' crashed" in str(errors[0])
