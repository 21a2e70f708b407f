"""Task processes are forked from a worker that never loaded the user's modules: numpy's BLAS
thread pool starts in the task process, after the fork, so a fork never copies a pool of threads
caught holding a lock (the deadlock that forking a process with numpy loaded risks). The worker's
only threads are its one Python thread and Open MPI's and UCX's, which the task process never
uses (docs/design.md, "The Python front end")."""

import os

import pytest

import fiber

BLAS_THREADS = "2"
MATRIX_SIDE = 200
ITEMS = 24


def blas_product(seed):
    """A matrix product on BLAS's threads, and whether this task's worker has a BLAS loaded (the
    task process itself must have: else the check of the worker would prove nothing)."""
    import numpy

    generator = numpy.random.default_rng(seed)
    matrix = generator.standard_normal((MATRIX_SIDE, MATRIX_SIDE))
    trace = float(numpy.trace(matrix @ matrix.T))
    with open("/proc/self/maps") as own_maps:
        assert "blas" in own_maps.read()
    with open(f"/proc/{os.getppid()}/maps") as worker_maps:
        worker_has_blas = "blas" in worker_maps.read()
    return seed, trace, worker_has_blas


def expected_trace(seed):
    import numpy

    matrix = numpy.random.default_rng(seed).standard_normal((MATRIX_SIDE, MATRIX_SIDE))
    return float(numpy.trace(matrix @ matrix.T))


@pytest.fixture(autouse=True)
def blas_threads_on(monkeypatch):
    # The master's environment reaches the task processes (the pool's initializer).
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", BLAS_THREADS)
    monkeypatch.setenv("OMP_NUM_THREADS", BLAS_THREADS)


def test_blas_threads_in_task_processes_forked_anew_for_every_task():
    # maxtasksperchild=1: every task runs in a task process forked for it from the worker.
    with fiber.Pool(2, maxtasksperchild=1) as pool:
        results = pool.map(blas_product, range(ITEMS), chunksize=1)
    assert [seed for seed, _, _ in results] == list(range(ITEMS))
    for seed, trace, _ in results:
        assert trace == pytest.approx(expected_trace(seed))
    assert not any(worker_has_blas for _, _, worker_has_blas in results)


def crash_once_then_multiply(seed, marker_folder):
    """The first try of each item ends its task process; the retry, forked anew, computes."""
    marker = os.path.join(marker_folder, str(seed))
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return blas_product(seed)


def test_blas_threads_after_crashed_task_processes(tmp_path):
    with fiber.Pool(2, initializer=blas_product, initargs=(0,)) as pool:
        calls = [(seed, str(tmp_path)) for seed in range(6)]
        results = pool.starmap(crash_once_then_multiply, calls)
    assert [seed for seed, _, _ in results] == list(range(6))
    assert not any(worker_has_blas for _, _, worker_has_blas in results)
