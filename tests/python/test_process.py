"""fiber.Process with multiprocessing's semantics: exit codes, join with a timeout, subclasses,
pid, terminate and kill, sentinel, current_process, and the names refused on a cluster."""

import ctypes
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import uuid

import pytest
from conftest import PROGRAM_TIMEOUT_SECONDS, ended, run_program, start_marked_program
from test_programs import processes_marked

import fiber

# How long a child sleeps when a test needs it alive meanwhile: far longer than any wait of the
# test, which ends it first.
ASLEEP_SECONDS = 600
# join(timeout) on a sleeping child: short, since it must come back with the child alive.
SHORT_JOIN_SECONDS = 0.3
# The longest wait for what a child sends.
POLL_LIMIT_SECONDS = 60


def run(target, *args):
    process = fiber.Process(target=target, args=args)
    process.start()
    return ended(process)


def raise_value_error():
    raise ValueError("raised in the child")


def segfault():
    ctypes.string_at(0)


def test_exit_codes_are_pythons():
    assert run(lambda: None) == 0
    assert run(raise_value_error) == 1
    assert run(sys.exit, 3) == 3
    assert run(sys.exit, None) == 0
    assert run(sys.exit, "a message") == 1
    assert run(os._exit, 7) == 7
    assert run(segfault) == -signal.SIGSEGV


def test_a_raising_run_prints_its_traceback_on_the_childs_stderr():
    # A program of its own: the child's stderr reaches the master's through MPI's launcher,
    # which holds the descriptor the program had when MPI started (pytest's capture cannot
    # redirect it afterwards).
    program = run_program(
        "import fiber\n"
        "def fail():\n"
        "    raise ValueError('raised in the child')\n"
        "def make_a_queue():\n"
        "    fiber.Queue()\n"
        "for target in (fail, make_a_queue):\n"
        "    process = fiber.Process(target=target)\n"
        "    process.start()\n"
        "    process.join()\n"
        "    print(process.name, process.exitcode)\n"
    )
    assert program.returncode == 0, program.stderr
    assert program.stdout.split("\n") == ["Process-1 1", "Process-2 1", ""]
    assert "Process Process-1:\nTraceback (most recent call last):" in program.stderr
    assert "ValueError: raised in the child" in program.stderr
    assert "Process Process-2:\n" in program.stderr
    assert "NotSupportedOnCluster: fiber: a Queue is made in the master" in program.stderr


def test_join_with_a_timeout_returns_with_the_process_alive():
    process = fiber.Process(target=time.sleep, args=(ASLEEP_SECONDS,), daemon=True)
    process.start()
    process.join(SHORT_JOIN_SECONDS)
    assert process.is_alive()
    assert process.exitcode is None
    assert process in fiber.active_children()
    process.terminate()
    process.join()
    assert process.exitcode == -signal.SIGTERM
    assert not process.is_alive()
    assert process not in fiber.active_children()


def test_kill_is_sigkill():
    process = fiber.Process(target=time.sleep, args=(ASLEEP_SECONDS,))
    process.start()
    process.kill()
    assert ended(process) == -signal.SIGKILL


def test_terminate_reaches_the_childs_sigterm_handler(tmp_path):
    marker = tmp_path / "handled"

    def handle_sigterm():
        def handler(signum, frame):
            marker.write_text("SIGTERM")
            sys.exit(5)

        signal.signal(signal.SIGTERM, handler)
        time.sleep(ASLEEP_SECONDS)

    process = fiber.Process(target=handle_sigterm)
    process.start()
    assert process.pid is not None  # it runs: the handler is set right after
    time.sleep(SHORT_JOIN_SECONDS)
    process.terminate()
    assert ended(process) == 5
    assert marker.read_text() == "SIGTERM"


class Doubler(fiber.Process):
    """A subclass whose run() and attributes travel to the child, as with multiprocessing."""

    def __init__(self, queue, value):
        super().__init__()
        self.queue = queue
        self.value = value

    def run(self):
        me = fiber.current_process()
        self.queue.put((self.value * 2, me.name, me.pid, fiber.parent_process().pid))


def test_a_subclass_runs_its_own_run():
    queue = fiber.Queue()
    process = Doubler(queue, 21)
    assert process.name.startswith("Doubler-")
    process.start()
    doubled, name, pid, parent = queue.get(timeout=POLL_LIMIT_SECONDS)
    assert ended(process) == 0
    assert (doubled, name, pid, parent) == (42, process.name, process.pid, os.getpid())
    assert pid != os.getpid()


def put_arguments(queue, *args, **kwargs):
    queue.put((args, kwargs))


def test_args_and_kwargs_reach_the_target():
    queue = fiber.Queue()
    process = fiber.Process(target=put_arguments, args=(queue, 1, "two"), kwargs={"three": [3]})
    process.start()
    assert queue.get(timeout=POLL_LIMIT_SECONDS) == ((1, "two"), {"three": [3]})
    assert ended(process) == 0


def test_current_process_in_the_master():
    assert fiber.current_process().name == "MainProcess"
    assert fiber.current_process().pid == os.getpid()
    assert fiber.parent_process() is None


def test_name_and_daemon_and_their_checks():
    process = fiber.Process(target=lambda: None, name="worker-a", daemon=True)
    assert process.name == "worker-a" and process.daemon
    assert process.pid is None and process.exitcode is None and not process.is_alive()
    with pytest.raises(AssertionError, match="can only join a started process"):
        process.join()
    with pytest.raises(AssertionError, match="group argument must be None"):
        fiber.Process(group=object())
    process.start()
    with pytest.raises(AssertionError, match="cannot start a process twice"):
        process.start()
    with pytest.raises(AssertionError, match="process has already started"):
        process.daemon = False
    assert ended(process) == 0


def test_close():
    process = fiber.Process(target=time.sleep, args=(ASLEEP_SECONDS,))
    process.start()
    with pytest.raises(ValueError, match="still running"):
        process.close()
    process.kill()
    process.join()
    process.close()
    with pytest.raises(ValueError, match="process object is closed"):
        process.exitcode


def test_sentinel_becomes_ready_at_the_end():
    process = fiber.Process(target=time.sleep, args=(SHORT_JOIN_SECONDS,))
    process.start()
    ready = multiprocessing.connection.wait([process.sentinel], timeout=POLL_LIMIT_SECONDS)
    assert ready == [process.sentinel]
    assert ended(process) == 0


def send_then_sleep(end, seconds):
    end.send("started")
    time.sleep(seconds)


def test_sentinels_and_pipe_ends_wait_together():
    mine, theirs = fiber.Pipe()
    sender = fiber.Process(target=send_then_sleep, args=(theirs, SHORT_JOIN_SECONDS))
    quick = fiber.Process(target=int)
    sender.start()
    quick.start()
    waited = [mine, sender.sentinel, quick.sentinel]
    ready = set()
    deadline = time.monotonic() + POLL_LIMIT_SECONDS
    while not {mine, quick.sentinel} <= ready and time.monotonic() < deadline:
        ready.update(multiprocessing.connection.wait(waited, timeout=POLL_LIMIT_SECONDS))
    assert {mine, quick.sentinel} <= ready
    assert mine.recv() == "started"
    assert multiprocessing.connection.wait([sender.sentinel], timeout=POLL_LIMIT_SECONDS) == [
        sender.sentinel
    ]
    assert ended(sender) == 0 and ended(quick) == 0


def test_an_unpicklable_target_is_refused_at_start():
    process = fiber.Process(target=lambda lock: None, args=(threading.Lock(),))
    with pytest.raises(TypeError, match="lock"):
        process.start()


@pytest.mark.parametrize("name", ["Manager", "Lock", "RLock", "Semaphore", "Event", "Value"])
def test_shared_memory_names_raise_one_clear_error(name):
    with pytest.raises(fiber.NotSupportedOnCluster, match="other nodes") as raised:
        getattr(fiber, name)()
    assert isinstance(raised.value, NotImplementedError)
    assert "fiber.Queue" in str(raised.value) or "Process.join" in str(raised.value)


def test_start_methods_are_accepted_and_ignored():
    fiber.set_start_method("spawn")
    fiber.set_start_method("fork", force=True)
    assert fiber.get_context("spawn") is fiber
    with pytest.raises(ValueError, match="cannot find context"):
        fiber.set_start_method("thread")


# Ends with a daemonic child asleep and another child not joined: multiprocessing's exit
# terminates the first and waits for the second.
UNJOINED_PROGRAM = f"""
import fiber, time
fiber.Process(target=time.sleep, args=({ASLEEP_SECONDS},), daemon=True).start()
fiber.Process(target=lambda: (time.sleep(0.5), print("joined at exit", flush=True))).start()
"""

# Waits for a child that sleeps far longer than a Ctrl-C may take to end the wait.
INTERRUPTED_JOIN_PROGRAM = f"""
import fiber, time
process = fiber.Process(target=time.sleep, args=({ASLEEP_SECONDS},))
process.start()
print("waiting", process.pid, flush=True)
process.join()
"""


def test_a_program_that_ends_without_joining_leaves_no_process():
    mark = f"fiber-test-{uuid.uuid4()}"
    program = run_program(UNJOINED_PROGRAM, env={"FIBER_TEST_MARK": mark})
    assert program.returncode == 0, program.stderr
    assert program.stdout == "joined at exit\n"
    assert processes_marked(mark.encode()) == []


def test_ctrl_c_during_join_raises_keyboard_interrupt_and_leaves_no_process():
    mark = f"fiber-test-{uuid.uuid4()}"
    program = start_marked_program(["-c", INTERRUPTED_JOIN_PROGRAM], mark)
    assert program.stdout.readline().startswith("waiting ")
    program.send_signal(signal.SIGINT)
    _, stderr = program.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    assert "KeyboardInterrupt" in stderr
    assert processes_marked(mark.encode()) == []
