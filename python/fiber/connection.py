"""fiber.Pipe and its Connections: multiprocessing.Pipe over fiber's pipe directions
(fiber::Pipe's, docs/design.md "Processes, queues and pipes"), of cloudpickled objects.

Each direction is read by one process, which the ends reach directly once it reads (a
shared-memory ring on one host, TCP between hosts). multiprocessing's EOFError needs the other
end's close to travel: close() sends an end mark down the end's outgoing direction, a Process's
end closes every end it received, and the master sends the marks of the ends it passed to a
Process once that process has ended however it ended (a crash too), so that recv() on the other
side raises EOFError, as when the last copy of a pipe's descriptor is closed. An end a Process
could read is its own: once it has ended, a send to it raises FiberError, whether or not it read.
"""

import contextlib
import pickle
import threading
import weakref
from multiprocessing import BufferTooShort

import cloudpickle

from fiber import _fiber, _runtime
from fiber.exceptions import FiberError

# Each message is one of these bytes, then (for data) the bytes sent.
_DATA = b"\x00"
_END = b"\x01"

# The ends this process received pickled (as a Process's or a task's argument).
_received = weakref.WeakSet()
# Per thread: the ends pickled within collecting_pickled(), if any.
_pickling = threading.local()


def close_received():
    """At a Process's end: its ends are closed, and their peers see EOFError."""
    for end in list(_received):
        end.close()


@contextlib.contextmanager
def collecting_pickled():
    """The list of the ends pickled on this thread meanwhile (a Process's arguments)."""
    _pickling.ends = ends = []
    try:
        yield ends
    finally:
        del _pickling.ends


def hold_read_ends(ends):
    """At a Process's start: the ends it may read are its own until it ends (end_for_peers), so
    that a send to one it never read fails then, as one to an end it read does."""
    for end in ends:
        if end._readable:
            end._inbox.reader_starts()


def let_go_read_ends(ends):
    """The Process given `ends` has ended (hold_read_ends)."""
    for end in ends:
        if end._readable:
            end._inbox.reader_ended()


def end_for_peers(ends):
    """Sends the end mark of each of `ends` to its peer: what their process's end would have
    sent had it not crashed (a second mark after its own is never read); and lets go of the ends
    it could read (hold_read_ends)."""
    for end in ends:
        end._send_end()
    let_go_read_ends(ends)


class Connection:
    """One end of a Pipe: multiprocessing.connection.Connection's methods."""

    def __init__(self, inbox, outbox, readable, writable):
        self._inbox = inbox
        self._outbox = outbox
        self._readable = readable
        self._writable = writable
        self._closed = False
        self._at_end = False  # the other end's end mark was read

    @property
    def closed(self):
        return self._closed

    @property
    def readable(self):
        return self._readable

    @property
    def writable(self):
        return self._writable

    def send(self, obj):
        self.send_bytes(cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def recv(self):
        return pickle.loads(self.recv_bytes())

    def send_bytes(self, buf, offset=0, size=None):
        self._check_writable()
        view = memoryview(buf).cast("B")
        if offset < 0:
            raise ValueError("offset is negative")
        if len(view) < offset:
            raise ValueError("buffer length < offset")
        if size is None:
            size = len(view) - offset
        elif size < 0:
            raise ValueError("size is negative")
        elif offset + size > len(view):
            raise ValueError("buffer length < offset + size")
        self._outbox.send(_DATA + view[offset : offset + size].tobytes())

    def recv_bytes(self, maxlength=None):
        self._check_readable()
        if maxlength is not None and maxlength < 0:
            raise ValueError("negative maxlength")
        message = self._take()
        if maxlength is not None and len(message) > maxlength:
            self.close()
            raise OSError("bad message length")
        return message

    def recv_bytes_into(self, buf, offset=0):
        self._check_readable()
        view = memoryview(buf).cast("B")
        if offset < 0 or offset > len(view):
            raise ValueError("negative offset" if offset < 0 else "offset too large")
        message = self._take()
        if len(message) > len(view) - offset:
            raise BufferTooShort(message)
        view[offset : offset + len(message)] = message
        return len(message)

    def poll(self, timeout=0.0):
        """True if recv() would not wait (a message, or the other end's close, is there)."""
        self._check_readable()
        if self._at_end:
            return True
        if timeout is not None:
            timeout = max(timeout, 0.0)
        return self._inbox.poll(timeout)

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._send_end()

    def _send_end(self):
        if not self._writable:
            return
        try:
            self._outbox.send(_END)
        except FiberError:  # the reading end's process has ended: nobody is left to tell
            pass

    def _take(self):
        if not self._at_end:
            message = self._inbox.receive(None)
            if message[:1] == _DATA:
                return message[1:]
            self._at_end = True
        raise EOFError

    def _check_open(self):
        if self._closed:
            raise OSError("handle is closed")

    def _check_readable(self):
        self._check_open()
        if not self._readable:
            raise OSError("connection is write-only")

    def _check_writable(self):
        self._check_open()
        if not self._writable:
            raise OSError("connection is read-only")

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __getstate__(self):
        self._check_open()
        collected = getattr(_pickling, "ends", None)
        if collected is not None:
            collected.append(self)
        return (self._inbox, self._outbox, self._readable, self._writable)

    def __setstate__(self, state):
        self.__init__(*state)
        _received.add(self)


def Pipe(duplex=True):
    """Two Connections; duplex: each sends to the other. One-way: (reader, writer)."""
    _runtime.start("a Pipe")
    to_first = _fiber.PipeChannel()
    if not duplex:
        return Connection(to_first, None, True, False), Connection(None, to_first, False, True)
    to_second = _fiber.PipeChannel()
    return (
        Connection(to_first, to_second, True, True),
        Connection(to_second, to_first, True, True),
    )
