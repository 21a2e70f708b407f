"""fiber.Queue, SimpleQueue and JoinableQueue with multiprocessing's semantics: between the
master and Processes, between two Processes, into pool tasks; Full and Empty at their timeouts;
close; task_done and join."""

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import PROGRAM_TIMEOUT_SECONDS, ended, started

import fiber

# The longest a test waits for what a child sends.
WAIT_SECONDS = 60
# A timeout that must run out (nothing will come).
SHORT_TIMEOUT_SECONDS = 0.2
ITEMS = 50


def produce(q, count):
    for i in range(count):
        q.put(("item", i))


def double_all(inbox, outbox):
    while (item := inbox.get()) is not None:
        outbox.put(item * 2)


def test_master_to_process_and_back():
    inbox, outbox = fiber.Queue(), fiber.Queue()
    worker = started(double_all, inbox, outbox)
    for i in range(ITEMS):
        inbox.put(i)
    inbox.put(None)
    assert [outbox.get(timeout=WAIT_SECONDS) for _ in range(ITEMS)] == [2 * i for i in range(ITEMS)]
    assert ended(worker) == 0


def test_between_two_processes():
    middle, results = fiber.Queue(), fiber.Queue()
    producer = started(produce, middle, ITEMS)
    consumer = started(lambda: results.put([middle.get() for _ in range(ITEMS)]))
    assert results.get(timeout=WAIT_SECONDS) == [("item", i) for i in range(ITEMS)]
    assert ended(producer) == 0 and ended(consumer) == 0


def test_puts_of_a_process_are_there_at_its_end():
    q = fiber.Queue()
    assert ended(started(produce, q, ITEMS)) == 0
    assert q.qsize() == ITEMS
    assert [q.get_nowait() for _ in range(ITEMS)] == [("item", i) for i in range(ITEMS)]
    assert q.empty()


def test_a_pool_task_puts_on_a_queue(pool):
    q = fiber.Queue()
    pool.map(lambda i: q.put(i * i), range(10))
    assert sorted(q.get(timeout=WAIT_SECONDS) for _ in range(10)) == [i * i for i in range(10)]


def test_empty_and_full_at_their_timeouts():
    q = fiber.Queue(maxsize=2)
    with pytest.raises(queue.Empty):
        q.get(timeout=SHORT_TIMEOUT_SECONDS)
    with pytest.raises(queue.Empty):
        q.get_nowait()
    with pytest.raises(queue.Empty):
        q.get(block=False)
    q.put(1)
    q.put_nowait(2)
    assert q.full() and q.qsize() == 2
    with pytest.raises(queue.Full):
        q.put(3, timeout=SHORT_TIMEOUT_SECONDS)
    with pytest.raises(queue.Full):
        q.put_nowait(3)
    with pytest.raises(queue.Full):
        q.put(3, block=False)
    assert q.get() == 1 and q.get() == 2
    assert not q.full()


def test_a_bounded_put_waits_for_room_a_process_makes():
    q = fiber.Queue(maxsize=1)
    q.put("first")
    taker = started(lambda: q.get())
    q.put("second", timeout=WAIT_SECONDS)  # in once the process took the first
    assert ended(taker) == 0
    assert q.get(timeout=WAIT_SECONDS) == "second"


def put_later(q, item):
    """Puts `item` from a Python thread of this process, once the caller waits."""
    thread = threading.Thread(target=lambda: (time.sleep(SHORT_TIMEOUT_SECONDS), q.put(item)))
    thread.start()
    return thread


def test_waits_release_the_gil():
    # A wait that held the GIL would keep the thread from putting what ends it.
    q = fiber.Queue()
    thread = put_later(q, "from a thread")
    assert q.get(timeout=WAIT_SECONDS) == "from a thread"
    thread.join()
    inbox = fiber.Queue()
    taker = started(lambda: inbox.get())
    thread = put_later(inbox, "for the process")
    taker.join(WAIT_SECONDS)
    assert taker.exitcode == 0
    thread.join()


def test_objects_are_cloudpickled():
    q = fiber.Queue()
    q.put(lambda x: x + 1)
    assert q.get()(1) == 2


def test_close_and_join_thread():
    q = fiber.Queue()
    with pytest.raises(AssertionError, match="not closed"):
        q.join_thread()
    q.put("kept")
    q.close()
    q.join_thread()
    q.cancel_join_thread()
    with pytest.raises(ValueError, match="is closed"):
        q.put(1)
    with pytest.raises(ValueError, match="is closed"):
        q.get()


def test_simple_queue():
    q = fiber.SimpleQueue()
    assert q.empty()
    worker = started(produce, q, 3)
    assert [q.get() for _ in range(3)] == [("item", i) for i in range(3)]
    assert ended(worker) == 0 and q.empty()
    q.close()
    with pytest.raises(OSError, match="closed"):
        q.put(1)


def consume(q, results):
    while (item := q.get()) is not None:
        results.put(item)
        q.task_done()
    q.task_done()


def test_joinable_queue_join_waits_for_every_task_done():
    q, results = fiber.JoinableQueue(), fiber.Queue()
    consumers = [started(consume, q, results) for _ in range(2)]
    producer = started(produce, q, ITEMS)
    assert ended(producer) == 0
    q.join()  # the producer's puts are counted before the consumers can take them
    assert results.qsize() == ITEMS
    for _ in consumers:
        q.put(None)
    q.join()
    assert [ended(consumer) for consumer in consumers] == [0, 0]
    assert sorted(results.get() for _ in range(ITEMS)) == sorted(("item", i) for i in range(ITEMS))


def test_joinable_queue_task_done_too_many_times():
    q = fiber.JoinableQueue()
    q.put(1)
    q.get()
    q.task_done()
    q.join()
    with pytest.raises(ValueError, match="task_done\\(\\) called too many times"):
        q.task_done()


# A get on a queue and a recv on a pipe that nothing will ever reach, each ended by a Ctrl-C.
INTERRUPTED_PROGRAM = """
import fiber
queue, (end, _) = fiber.Queue(), fiber.Pipe()
try:
    print("waiting in get", flush=True)  # a Ctrl-C from here on is the get's
    queue.get()
except KeyboardInterrupt:
    print("get interrupted", flush=True)
print("waiting in recv", flush=True)
end.recv()
"""


def test_ctrl_c_ends_a_get_and_a_recv():
    program = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_PROGRAM],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert program.stdout.readline() == "waiting in get\n"
    program.send_signal(signal.SIGINT)
    assert program.stdout.readline() == "get interrupted\n"
    assert program.stdout.readline() == "waiting in recv\n"
    program.send_signal(signal.SIGINT)
    _, stderr = program.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    assert program.returncode != 0
    assert "KeyboardInterrupt" in stderr
