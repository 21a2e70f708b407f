"""A pool's worker shape from Python (fiber.Pool(cores=, memory=, gpus=), fiber::WorkerShape; the
same for fiber.Process): bad values refused at the call, memory strings read, and on real
workers: cores bound and told to thread pools, a task over its memory limit stopped in its task
process."""

import ctypes
import math
import os

import pytest

import fiber
from fiber import _shape

MIB = 2**20


def seen():
    """The cores this task process may run on, and OMP_NUM_THREADS as C libraries read it (the
    worker sets it after the interpreter read its environment)."""
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    threads = libc.getenv(b"OMP_NUM_THREADS")
    return sorted(os.sched_getaffinity(0)), threads and threads.decode(), os.getppid()


def fill(megabytes):
    """Allocates `megabytes` MiB and says how many it holds."""
    return len(bytearray(megabytes * MIB)) // MIB


@pytest.mark.parametrize(
    "options, error",
    [
        ({"cores": -1}, ValueError),
        ({"cores": 1.5}, TypeError),
        ({"cores": True}, TypeError),
        ({"gpus": -1}, ValueError),
        ({"gpus": "1"}, TypeError),
        ({"memory": -1}, ValueError),
        ({"memory": "8 lightyears"}, ValueError),
        ({"memory": "GiB"}, ValueError),
        ({"memory": math.nan}, TypeError),
        ({"memory": 1.5}, TypeError),
    ],
)
def test_a_bad_shape_is_one_clear_error_at_the_call(options, error):
    with pytest.raises(error):
        fiber.Pool(1, **options)
    with pytest.raises(error):
        fiber.Process(target=print, **options)


@pytest.mark.parametrize(
    "text, size",
    [
        ("8GiB", 8 * 2**30),
        ("512 MiB", 512 * MIB),
        ("1.5GB", 1_500_000_000),
        ("100", 100),
        ("2kb", 2000),
        (4096, 4096),
        (None, 0),
    ],
)
def test_memory_is_bytes_or_a_string_with_a_unit(text, size):
    assert _shape.memory_bytes(text) == size


def test_each_worker_is_bound_to_a_core_of_its_own_and_its_thread_pools_know():
    with fiber.Pool(2, cores=1) as pool:
        seen_by = pool.map(lambda _: (time_to_spread(), seen())[1], range(2), chunksize=1)
    workers = {worker for _, _, worker in seen_by}
    assert len(workers) == 2, seen_by
    cores = [cpus for cpus, _, _ in seen_by]
    assert all(len(cpus) == 1 for cpus in cores), cores
    assert cores[0] != cores[1], cores
    assert all(threads == "1" for _, threads, _ in seen_by), seen_by


def time_to_spread():
    """Holds a task long enough that each idle worker of a pool takes one item of a map."""
    import time

    time.sleep(0.3)


def test_a_task_over_its_memory_limit_fails_in_its_task_process_alone():
    with fiber.Pool(1, memory="256MiB") as pool:
        assert pool.apply(fill, (16,)) == 16
        with pytest.raises(MemoryError) as raised:
            pool.apply(fill, (1024,))
        assert f"at most {256 * 2**20:,} bytes" in "".join(raised.value.__notes__)
        assert pool.apply(fill, (16,)) == 16


def put_seen(queue):
    """A Process's target: puts what its task process sees into `queue`."""
    queue.put(seen())


def test_a_process_of_two_cores_has_both_and_its_thread_pools_know():
    queue = fiber.Queue()
    process = fiber.Process(target=put_seen, args=(queue,), cores=2)
    process.start()
    cpus, threads, _ = queue.get(timeout=60)
    process.join()
    assert process.exitcode == 0
    assert len(cpus) == 2, cpus
    assert threads == "2"
