"""Whole programs: a master that is `python3 -c`, and the end of a program leaving no process;
the package's bytecode, which every worker imports."""

import importlib.util
import os
import signal
import time
import uuid

import pytest

import fiber

from conftest import PROGRAM_TIMEOUT_SECONDS, run_program, start_marked_program

# Prints how many other processes run fiber's worker module (its workers and their task
# processes, identified by the marker its environment carries to them), then ends without
# closing its pool.
UNCLOSED_POOL_PROGRAM = """
import fiber, os
def marked_worker(pid):
    try:
        return (b"fiber/_worker.py" in open(f"/proc/{pid}/cmdline", "rb").read() and
                os.environ["FIBER_TEST_MARK"].encode() in open(f"/proc/{pid}/environ", "rb").read())
    except OSError:  # another process of the machine, ended meanwhile
        return False
pool = fiber.Pool(2)
print(pool.map(lambda x: x + 1, [1, 2]))
print(sum(1 for pid in os.listdir("/proc") if pid.isdigit() and pid != str(os.getpid()) and
          marked_worker(pid)))
"""

# Waits for a task far longer than a Ctrl-C may take to end it, after saying so.
SLEEPING_TASK_SECONDS = 60
INTERRUPTED_PROGRAM = f"""
import fiber, time
pool = fiber.Pool(1)
pending = pool.apply_async(time.sleep, ({SLEEPING_TASK_SECONDS},))
print("waiting", flush=True)
pending.get()
"""

# Its tasks sleep longer than a program may run (PROGRAM_TIMEOUT_SECONDS): only a join that Ctrl-C
# interrupts lets it end in time. It says "joining" once its main thread waits in Pool.join (the
# innermost Python frame while C++ waits), so that the Ctrl-C comes during the join.
JOINING_TASK_SECONDS = 10 * PROGRAM_TIMEOUT_SECONDS
JOIN_LOOK_SECONDS = 0.01
INTERRUPTED_JOIN_PROGRAM = f"""
import fiber, sys, threading, time
pool = fiber.Pool(2)
pending = pool.map_async(time.sleep, [{JOINING_TASK_SECONDS}] * 2, chunksize=1)
pool.close()
def say_when_joining(main=threading.main_thread().ident):
    while sys._current_frames()[main].f_code.co_name != "join":
        time.sleep({JOIN_LOOK_SECONDS})
    print("joining", flush=True)
threading.Thread(target=say_when_joining, daemon=True).start()
pool.join()
"""


def processes_marked(mark):
    """Python processes running fiber's worker module whose environment carries `mark`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline, open(
                f"/proc/{pid}/environ", "rb"
            ) as environ:
                command, variables = cmdline.read(), environ.read()
        except OSError:  # ended meanwhile
            continue
        if b"python3" in command and b"fiber/_worker.py" in command and mark in variables:
            found.append(int(pid))
    return found


def test_a_python_c_program_runs_its_lambda_in_workers():
    program = run_program("import fiber; print(fiber.Pool(2).map(lambda x: x * 10, [1, 2]))")
    assert program.returncode == 0, program.stderr
    assert program.stdout == "[10, 20]\n"


# Values of a class of the master's __main__, which its workers do not have, cross both ways as
# arguments and results: by value (cloudpickle), not by a reference to the workers' own __main__.
MAIN_CLASS_PROGRAM = """
import fiber
class Point:
    def __init__(self, x):
        self.x = x
def moved(point):
    return Point(point.x + 1)
with fiber.Pool(2) as pool:
    print([p.x for p in pool.map(moved, [Point(1), Point(2)], 1)], pool.apply(moved, (Point(5),)).x)
"""


def test_values_of_a_class_of_the_masters_main_cross_both_ways():
    program = run_program(MAIN_CLASS_PROGRAM)
    assert program.returncode == 0, program.stderr
    assert program.stdout == "[2, 3] 6\n"


def test_a_program_that_ends_without_close_leaves_no_process():
    mark = f"fiber-test-{uuid.uuid4()}"
    program = run_program(UNCLOSED_POOL_PROGRAM, env={"FIBER_TEST_MARK": mark})
    assert program.returncode == 0, program.stderr
    result, running = program.stdout.splitlines()
    assert result == "[2, 3]"
    assert int(running) >= 2  # its two workers at least, carrying the mark
    assert processes_marked(mark.encode()) == []


# A daemon thread still inside a pool's wait when the main thread ends: the program ends as
# multiprocessing's does, status 0 and nothing on stderr (was: a segfault in 2 of 3 runs for
# map_reduce, the C++ pool dropped by that thread after the runtime's end; a PoolClosed traceback
# from the thread for the others).
DAEMON_THREAD_WAITING_PROGRAM = f"""
import fiber, operator, threading, time
pool = fiber.Pool(2)
waits = {{
    "map": lambda: pool.map(time.sleep, [{SLEEPING_TASK_SECONDS}] * 4),
    "imap": lambda: list(pool.imap(time.sleep, [{SLEEPING_TASK_SECONDS}] * 4)),
    "map_reduce": lambda: pool.map_reduce(time.sleep, [{SLEEPING_TASK_SECONDS}] * 4, operator.add),
}}
threading.Thread(target=waits[WAIT], daemon=True).start()
time.sleep(1)  # the thread is inside its wait
print("ends")
"""


@pytest.mark.parametrize("wait", ["map", "imap", "map_reduce"])
def test_a_program_ends_cleanly_with_a_daemon_thread_inside_a_pool_wait(wait):
    mark = f"fiber-test-{uuid.uuid4()}"
    program = run_program(
        f"WAIT = {wait!r}\n" + DAEMON_THREAD_WAITING_PROGRAM, env={"FIBER_TEST_MARK": mark}
    )
    assert (program.returncode, program.stdout, program.stderr) == (0, "ends\n", "")
    assert processes_marked(mark.encode()) == []


def test_ctrl_c_during_a_wait_raises_keyboard_interrupt_and_leaves_no_process():
    mark = f"fiber-test-{uuid.uuid4()}"
    program = start_marked_program(["-c", INTERRUPTED_PROGRAM], mark)
    assert program.stdout.readline() == "waiting\n"
    interrupted = time.monotonic()
    program.send_signal(signal.SIGINT)
    _, stderr = program.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    assert time.monotonic() - interrupted < SLEEPING_TASK_SECONDS / 2
    assert "KeyboardInterrupt" in stderr
    assert processes_marked(mark.encode()) == []


def test_ctrl_c_during_join_raises_keyboard_interrupt_and_leaves_no_process():
    mark = f"fiber-test-{uuid.uuid4()}"
    program = start_marked_program(["-c", INTERRUPTED_JOIN_PROGRAM], mark)
    try:
        assert program.stdout.readline() == "joining\n"
        program.send_signal(signal.SIGINT)
        _, stderr = program.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    finally:
        program.kill()  # a join that ignored Ctrl-C: the test fails, and leaves nothing running
    assert "in join" in stderr and stderr.rstrip().endswith("KeyboardInterrupt")
    assert processes_marked(mark.encode()) == []


def test_every_module_of_the_package_has_its_bytecode():
    """Every worker imports fiber: from source that is 15-20 ms more per worker, and this machine
    kind sets PYTHONDONTWRITEBYTECODE, so nobody writes the bytecode at the first import; the
    build compiles it (python/CMakeLists.txt), as the install does."""
    folder = os.path.dirname(fiber.__file__)
    modules = [name for name in os.listdir(folder) if name.endswith(".py")]
    assert modules
    for name in modules:
        source = os.path.join(folder, name)
        compiled = importlib.util.cache_from_source(source)
        assert os.path.exists(compiled), f"{name} has no bytecode ({compiled})"
        assert os.path.getmtime(compiled) >= os.path.getmtime(source), f"{name}'s is stale"
