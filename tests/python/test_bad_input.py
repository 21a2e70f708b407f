"""Bad input: one clear error of the type multiprocessing raises, never a hang, and the pool goes
on working after it."""

import collections
import contextlib
import importlib
import os
import socket
import sys
import threading
import uuid
from multiprocessing.pool import MaybeEncodingError

import pytest

import fiber
from conftest import run_program

# Lines each task of NOISY_PROGRAM prints to stdout and to stderr, and how many tasks print.
NOISY_LINES = 2000
NOISY_TASKS = 4
NOISY_PROGRAM = f"""
import fiber, sys

def noisy(x):
    for i in range({NOISY_LINES}):
        print(f"out {{x}} {{i}}")
        print(f"err {{x}} {{i}}", file=sys.stderr)
    return x * x

with fiber.Pool(2) as pool:
    results = pool.map(noisy, range({NOISY_TASKS}), chunksize=1)
# One write: print's pieces are writes of their own when stdout is unbuffered (PYTHONUNBUFFERED),
# and the task processes' forwarded output may fall between them.
sys.stdout.write(f"results {{results}}\\n")
"""


def identity(value):
    return value


def notes_of(error):
    return "\n".join(getattr(error, "__notes__", []))


def numbers():
    yield 1


def assert_the_pool_goes_on(pool):
    assert pool.map(abs, [-1, -2]) == [1, 2]


@pytest.mark.parametrize(
    "make, kind", [(threading.Lock, "lock"), (numbers, "generator"), (socket.socket, "socket")]
)
def test_an_unpicklable_argument_is_an_error_at_the_call_that_names_it(pool, make, kind):
    with contextlib.ExitStack() as made:
        unpicklable = make()
        if hasattr(unpicklable, "close"):
            made.callback(unpicklable.close)
        with pytest.raises(TypeError, match=f"cannot pickle '.*{kind}' object") as raised:
            pool.map(identity, [1, unpicklable])
        assert "argument 0" in notes_of(raised.value) and kind in notes_of(raised.value)
        with pytest.raises(TypeError, match="cannot pickle") as raised:
            pool.apply_async(identity, (), {"value": unpicklable})
        assert "keyword argument 'value'" in notes_of(raised.value)
    assert_the_pool_goes_on(pool)


def test_an_unpicklable_function_is_an_error_that_names_what_it_holds(pool):
    held = threading.Lock()
    with pytest.raises(TypeError, match="cannot pickle") as raised:
        pool.map(lambda x: (held, x), [1])
    assert "<lambda>" in notes_of(raised.value)
    assert "its closure's variable 'held'" in notes_of(raised.value)
    with pytest.raises(TypeError, match="cannot pickle") as raised:
        pool.apply(lambda lock=held: lock)
    assert "its default for 'lock'" in notes_of(raised.value)
    assert_the_pool_goes_on(pool)


def test_an_unpicklable_result_fails_its_item_alone_and_says_which(pool):
    results = pool.imap(lambda x: threading.Lock() if x == 1 else x, range(3))
    assert next(results) == 0
    with pytest.raises(MaybeEncodingError, match="lock") as raised:
        next(results)
    assert "cannot pickle" in str(raised.value)
    assert next(results) == 2
    with pytest.raises(MaybeEncodingError, match="lock"):
        pool.map(lambda x: threading.Lock() if x == 1 else x, range(3))
    assert_the_pool_goes_on(pool)


def test_a_task_that_prints_lots_corrupts_nothing():
    program = run_program(NOISY_PROGRAM)
    assert program.returncode == 0, program.stderr
    # Lines of different task processes may mix (docs/platform.md, "A task's output is forwarded
    # in pieces"), and the master's own line (one write) may come after a piece that ends
    # mid-line: it is found whole, once, and every character the tasks printed arrives, in its
    # own stream.
    results = f"results {[x * x for x in range(NOISY_TASKS)]}\n"
    assert program.stdout.count(results) == 1, program.stdout[-500:]
    for stream, tag, text in (("stdout", "out", program.stdout), ("stderr", "err", program.stderr)):
        printed = "".join(
            f"{tag} {x} {i}\n" for x in range(NOISY_TASKS) for i in range(NOISY_LINES)
        )
        arrived = text.replace(results, "") if stream == "stdout" else text
        assert collections.Counter(arrived) == collections.Counter(printed), stream


def make_module(folder, name, text):
    (folder / f"{name}.py").write_text(text)


def test_a_module_the_workers_cannot_import_is_an_error_naming_it(tmp_path, monkeypatch):
    name = f"fiber_bad_input_{uuid.uuid4().hex}"
    make_module(tmp_path, name, "def double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)  # removed again after the test
    sys.path.remove(str(tmp_path))  # gone before the pool starts: its workers never see it
    with fiber.Pool(1) as pool:
        with pytest.raises(ModuleNotFoundError, match=name) as raised:
            pool.map(module.double, [1, 2])
        assert f"could not import module '{name}'" in notes_of(raised.value)
        assert_the_pool_goes_on(pool)


def test_a_module_that_raises_at_import_in_task_processes_is_an_error_naming_it(
    tmp_path, monkeypatch
):
    name = f"fiber_bad_input_{uuid.uuid4().hex}"
    make_module(
        tmp_path,
        name,
        f"import os\nif os.getpid() != {os.getpid()}:\n"
        "    raise RuntimeError('this module imports in its master only')\n"
        "def double(x):\n    return 2 * x\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)  # removed again after the test
    with fiber.Pool(1) as pool:  # the folder is on the workers' path too
        with pytest.raises(RuntimeError, match="in its master only") as raised:
            pool.apply(module.double, (1,))
        assert f"could not import module '{name}'" in notes_of(raised.value)
        assert_the_pool_goes_on(pool)


def test_a_function_that_is_not_callable_is_a_type_error_at_the_call(pool):
    for call in (
        lambda: pool.map(3, [1]),
        lambda: pool.apply_async(3),
        lambda: pool.starmap(3, [(1,)]),
        lambda: pool.imap(3, [1]),
        lambda: pool.imap_unordered(3, [1]),
    ):
        with pytest.raises(TypeError, match="'int' object is not callable"):
            call()
    assert_the_pool_goes_on(pool)


@pytest.mark.parametrize("chunksize", [0, -1])
def test_a_chunksize_below_one_is_a_value_error(pool, chunksize):
    for method in (pool.map, pool.map_async, pool.imap, pool.imap_unordered):
        with pytest.raises(ValueError, match=f"Chunksize must be 1\\+, not {chunksize}"):
            method(abs, [1, 2], chunksize=chunksize)
    with pytest.raises(ValueError, match="Chunksize must be 1"):
        pool.starmap(abs, [(1,)], chunksize=chunksize)
    assert_the_pool_goes_on(pool)


def test_a_chunksize_that_is_not_an_int_is_refused_as_multiprocessing_refuses_it(pool):
    with pytest.raises(ValueError, match="Chunksize must be an int"):
        pool.map(abs, [1], chunksize=1.5)
    with pytest.raises(TypeError):
        pool.map(abs, [1], chunksize="2")
    assert_the_pool_goes_on(pool)


@pytest.mark.parametrize("processes", [0, -1])
def test_fewer_than_one_process_is_a_value_error(processes):
    with pytest.raises(ValueError, match="Number of processes must be at least 1"):
        fiber.Pool(processes)


def test_a_number_of_processes_that_is_not_an_int_is_a_type_error():
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        fiber.Pool(2.5)
    with pytest.raises(TypeError):
        fiber.Pool("2")


def test_a_map_over_what_is_not_iterable_is_a_type_error(pool):
    for method in (pool.map, pool.map_async, pool.starmap, pool.imap, pool.imap_unordered):
        with pytest.raises(TypeError, match="'int' object is not iterable"):
            method(abs, 3)
    assert_the_pool_goes_on(pool)
