"""fiber.Pipe with multiprocessing's semantics: both ways between the master and a Process,
one-way ends that refuse the wrong direction, bytes with offsets, poll, and EOFError once the
other end is closed or its Process has ended; a send to an end whose Process ended unread fails."""

import array
import multiprocessing.connection
import os
import socket
import time
from multiprocessing import BufferTooShort

import pytest
from conftest import ended, started

import fiber

# The longest a test waits for what a child sends.
WAIT_SECONDS = 60
ROUND_TRIPS = 20


def echo_incremented(end):
    while (value := end.recv()) is not None:
        end.send(value + 1)


def test_duplex_both_ways():
    mine, theirs = fiber.Pipe()
    child = started(echo_incremented, theirs)
    for i in range(ROUND_TRIPS):
        mine.send(i)
        assert mine.poll(WAIT_SECONDS)
        assert mine.recv() == i + 1
    mine.send(None)
    assert ended(child) == 0


def test_eof_once_the_process_with_the_other_end_has_ended():
    mine, theirs = fiber.Pipe()
    child = started(lambda end: end.send("last"), theirs)
    assert mine.recv() == "last"
    assert ended(child) == 0
    assert mine.poll(WAIT_SECONDS)  # recv() would not wait: it raises
    with pytest.raises(EOFError):
        mine.recv()
    with pytest.raises(EOFError):
        mine.recv()


def crash_holding(end):
    end.send("before the crash")
    os._exit(9)


def test_eof_once_the_process_with_the_other_end_has_crashed():
    mine, theirs = fiber.Pipe()
    child = started(crash_holding, theirs)
    assert mine.recv() == "before the crash"
    with pytest.raises(EOFError):
        mine.recv()  # no join needed: the master marks the end once the process has ended
    assert ended(child) == 9


def test_a_send_to_an_end_whose_process_ended_unread_fails():
    mine, theirs = fiber.Pipe()
    child = started(lambda end: None, theirs)
    assert ended(child) == 0
    # The master lets the child's ends go once it has seen it end, on a thread of its own.
    deadline = time.monotonic() + WAIT_SECONDS
    with pytest.raises(fiber.FiberError, match="ended without reading it"):
        while time.monotonic() < deadline:
            mine.send("anyone?")
            time.sleep(0.05)


def test_eof_when_the_other_end_is_closed():
    reader, writer = fiber.Pipe(duplex=False)
    writer.send_bytes(b"bytes")
    writer.close()
    assert writer.closed
    assert reader.recv_bytes() == b"bytes"
    with pytest.raises(EOFError):
        reader.recv_bytes()


def test_one_way_ends_refuse_the_wrong_direction():
    reader, writer = fiber.Pipe(duplex=False)
    assert reader.readable and not reader.writable
    assert writer.writable and not writer.readable
    with pytest.raises(OSError, match="connection is read-only"):
        reader.send(1)
    with pytest.raises(OSError, match="connection is write-only"):
        writer.recv()
    with pytest.raises(OSError, match="connection is write-only"):
        writer.poll()


def test_one_way_from_a_process():
    reader, writer = fiber.Pipe(duplex=False)
    child = started(lambda end: [end.send(i) for i in range(ROUND_TRIPS)], writer)
    assert [reader.recv() for _ in range(ROUND_TRIPS)] == list(range(ROUND_TRIPS))
    assert ended(child) == 0


def test_bytes_with_offsets_and_limits():
    a, b = fiber.Pipe()
    a.send_bytes(b"0123456789", 2, 3)
    assert b.recv_bytes() == b"234"
    a.send_bytes(bytearray(b"abc"), 1)
    buffer = bytearray(8)
    assert b.recv_bytes_into(buffer, 4) == 2
    assert buffer[4:6] == b"bc"
    with pytest.raises(ValueError, match="offset is negative"):
        a.send_bytes(b"x", -1)
    with pytest.raises(ValueError, match="buffer length < offset \\+ size"):
        a.send_bytes(b"x", 0, 2)
    a.send_bytes(b"too long")
    with pytest.raises(BufferTooShort) as short:
        b.recv_bytes_into(bytearray(3))
    assert short.value.args[0] == b"too long"  # multiprocessing's: the message in the error
    a.send_bytes(b"too long")
    with pytest.raises(OSError, match="bad message length"):
        b.recv_bytes(3)


def test_buffers_go_as_their_bytes():
    a, b = fiber.Pipe()
    a.send_bytes(array.array("i", [1, 2, 3]))
    received = array.array("i", [0] * 3)
    assert b.recv_bytes_into(received) == 3 * received.itemsize
    assert received.tolist() == [1, 2, 3]


def test_poll_times_out_and_closed_ends_refuse():
    a, b = fiber.Pipe()
    assert not a.poll()
    assert not a.poll(0.2)
    b.send({"key": [1, 2]})
    assert a.poll(WAIT_SECONDS)
    assert a.recv() == {"key": [1, 2]}
    a.close()
    with pytest.raises(OSError, match="handle is closed"):
        a.send(1)
    with pytest.raises(OSError, match="handle is closed"):
        a.recv()


def test_two_processes_talk_through_a_pipe():
    first, second = fiber.Pipe()
    results = fiber.Queue()
    pinger = started(lambda end: [end.send("ping"), results.put(end.recv())], first)
    ponger = started(lambda end: end.send(end.recv() + "/pong"), second)
    assert results.get(timeout=WAIT_SECONDS) == "ping/pong"
    assert ended(pinger) == 0 and ended(ponger) == 0


def test_an_end_passed_to_a_pool_task(pool):
    mine, theirs = fiber.Pipe()
    mine.send(20)
    pool.apply(lambda end: end.send(end.recv() + 1), (theirs,))
    assert mine.recv() == 21


# multiprocessing.connection.wait over Connections: each end's fileno() is a descriptor that is
# readable while recv() would not wait (a message, or the other end's end mark, is there).


def test_fiber_connection_wait_is_multiprocessing_s():
    assert fiber.connection.wait is multiprocessing.connection.wait


def test_wait_sees_a_message_and_not_before():
    a, b = fiber.Pipe()
    assert multiprocessing.connection.wait([a], timeout=0.2) == []
    b.send("here")
    assert multiprocessing.connection.wait([a], timeout=WAIT_SECONDS) == [a]
    assert multiprocessing.connection.wait([a], timeout=0) == [a]  # until it is taken
    assert a.recv() == "here"
    assert multiprocessing.connection.wait([a], timeout=0.2) == []


def test_wait_stays_ready_while_messages_are_left():
    a, b = fiber.Pipe()
    for i in range(3):
        b.send(i)
    got = []
    while len(got) < 3:
        assert multiprocessing.connection.wait([a], timeout=WAIT_SECONDS) == [a]
        got.append(a.recv())
    assert got == [0, 1, 2]
    assert not multiprocessing.connection.wait([a], timeout=0.2)


def send_later(end, delay):
    time.sleep(delay)
    end.send("late")


def test_wait_on_ends_sentinels_and_a_socket_together():
    mine, theirs = fiber.Pipe()
    quiet, _ = fiber.Pipe()
    local, remote = socket.socketpair()
    child = started(send_later, theirs, 0.5)
    waited = [quiet, mine, child.sentinel, local]
    # The child sends, then ends: the sentinel may come first.
    assert set(multiprocessing.connection.wait(waited, timeout=WAIT_SECONDS)) <= {
        mine,
        child.sentinel,
    }
    assert mine in multiprocessing.connection.wait([mine], timeout=WAIT_SECONDS)
    assert mine.recv() == "late"
    # The child's end: its close reaches mine as an end mark, so both become ready.
    ready = set()
    deadline = time.monotonic() + WAIT_SECONDS
    while ready != {mine, child.sentinel} and time.monotonic() < deadline:
        ready.update(multiprocessing.connection.wait(waited, timeout=WAIT_SECONDS))
    assert ready == {mine, child.sentinel}
    with pytest.raises(EOFError):
        mine.recv()
    assert multiprocessing.connection.wait([mine], timeout=0) == [mine]  # EOF stays ready
    remote.send(b"x")
    assert local in multiprocessing.connection.wait(waited, timeout=WAIT_SECONDS)
    assert ended(child) == 0
    local.close()
    remote.close()


def test_wait_sees_a_crashed_process_s_end_as_ready():
    mine, theirs = fiber.Pipe()
    child = started(lambda end: os._exit(3), theirs)
    assert multiprocessing.connection.wait([mine], timeout=WAIT_SECONDS) == [mine]
    with pytest.raises(EOFError):
        mine.recv()
    assert ended(child) == 3


def test_fileno_of_a_closed_end_is_refused():
    a, _ = fiber.Pipe()
    assert isinstance(a.fileno(), int)
    a.close()
    with pytest.raises(OSError, match="handle is closed"):
        a.fileno()


def test_a_write_only_end_never_becomes_ready():
    reader, writer = fiber.Pipe(duplex=False)
    reader.fileno()
    writer.send(1)
    assert multiprocessing.connection.wait([reader, writer], timeout=WAIT_SECONDS) == [reader]
    assert reader.recv() == 1


def wait_then_reply(end):
    assert multiprocessing.connection.wait([end], timeout=WAIT_SECONDS) == [end]
    end.send(end.recv() * 2)


def test_wait_in_a_process_on_an_end_it_received():
    mine, theirs = fiber.Pipe()
    child = started(wait_then_reply, theirs)
    time.sleep(0.2)
    mine.send(21)
    assert mine.recv() == 42
    assert ended(child) == 0
