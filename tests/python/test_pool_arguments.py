"""Pool's arguments and life: initializer, maxtasksperchild, close, join, terminate."""

import os

import pytest

import fiber


def test_bad_arguments_are_refused_as_multiprocessing_does():
    with pytest.raises(ValueError, match="at least 1"):
        fiber.Pool(0)
    with pytest.raises(TypeError, match="initializer must be a callable"):
        fiber.Pool(1, initializer=3)
    with pytest.raises(ValueError, match="maxtasksperchild"):
        fiber.Pool(1, maxtasksperchild=0)


def test_the_initializer_runs_in_each_task_process_with_its_args():
    def remember(value):
        os.environ["FIBER_TEST_INITIALIZED"] = value

    with fiber.Pool(2, initializer=remember, initargs=("yes",)) as pool:
        assert pool.map(lambda _: os.environ.get("FIBER_TEST_INITIALIZED"), range(4)) == ["yes"] * 4


def test_workers_run_in_the_masters_folder_with_its_path_and_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FIBER_TEST_FROM_MASTER", "42")
    with fiber.Pool(1) as pool:
        cwd, variable, path = pool.apply(
            lambda: (os.getcwd(), os.environ.get("FIBER_TEST_FROM_MASTER"), __import__("sys").path)
        )
    assert (cwd, variable) == (str(tmp_path), "42")
    assert path == __import__("sys").path


def test_maxtasksperchild_replaces_the_task_process():
    with fiber.Pool(1, maxtasksperchild=1) as pool:
        pids = {pool.apply(os.getpid) for _ in range(3)}
    assert len(pids) == 3


def test_close_then_join_finishes_the_work_and_refuses_more():
    pool = fiber.Pool(2)
    pending = pool.map_async(abs, range(-5, 0))
    pool.close()
    with pytest.raises(ValueError, match="Pool not running"):
        pool.apply(abs, (1,))
    pool.join()
    assert pending.get(timeout=0) == [5, 4, 3, 2, 1]


def test_join_before_close_is_refused():
    with fiber.Pool(1) as pool:
        with pytest.raises(ValueError, match="still running"):
            pool.join()


def test_terminate_fails_the_pending_work():
    pool = fiber.Pool(1)
    pending = pool.apply_async(__import__("time").sleep, (30,))
    pool.terminate()
    pool.join()
    with pytest.raises(fiber.PoolClosed):
        pending.get(timeout=60)


def test_cpu_count_is_this_machines():
    assert fiber.cpu_count() == os.cpu_count()


def test_the_next_pool_takes_the_workers_back_after_terminate_or_join():
    first = fiber.Pool(1)
    worker = first.apply(os.getppid)  # the task process's parent: the worker
    first.terminate()
    second = fiber.Pool(1)
    assert second.apply(os.getppid) == worker
    second.close()
    second.join()
    with fiber.Pool(1) as third:
        assert third.apply(os.getppid) == worker
