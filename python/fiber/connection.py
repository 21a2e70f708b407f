"""fiber.Pipe and its Connections: multiprocessing.Pipe over fiber's pipe directions
(fiber::Pipe's, docs/design.md "Processes, queues and pipes"), of cloudpickled objects.

Each direction is read by one process, which the ends reach directly once it reads (a
shared-memory ring on one host, TCP between hosts). multiprocessing's EOFError needs the other
end's close to travel: close() sends an end mark down the end's outgoing direction, a Process's
end closes every end it received, and the master sends the marks of the ends it passed to a
Process once that process has ended however it ended (a crash too), so that recv() on the other
side raises EOFError, as when the last copy of a pipe's descriptor is closed. An end a Process
could read is its own: once it has ended, a send to it raises FiberError, whether or not it read.

An end's fileno() is a descriptor readable while recv() would not wait, so that
multiprocessing.connection.wait (re-exported here as `wait`) and select take fiber's ends mixed
with sentinels and sockets: an eventfd that a watcher thread of the reading process sets once the
direction's poll sees an item, and that recv() clears when it takes one (_Readiness).
"""

import atexit
import contextlib
import os
import pickle
import threading
import weakref
from multiprocessing import BufferTooShort
from multiprocessing.connection import wait  # noqa: F401 (fiber.connection.wait, as mp's)

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
# How long a readiness watcher waits in one poll: how soon it sees its end closed, or the exit.
_WATCH_SECONDS = 0.1
# The readiness descriptors whose watcher may still run: stopped at exit, before the runtime ends.
_watched = weakref.WeakSet()
_watched_lock = threading.Lock()
_stop_registered = False


def close_received():
    """At a Process's end: its ends are closed, and their peers see EOFError."""
    for end in list(_received):
        end.close()
    _stop_watchers()


def _stop_watchers():
    """Stops every readiness watcher: none may be inside the C++ poll once the runtime ends."""
    for readiness in list(_watched):
        readiness.stop()


class _Readiness:
    """A descriptor that is readable while a direction has an item to take: an eventfd that a
    watcher thread sets once the direction's poll sees one (the item is left there), and that
    the reader clears as it takes one (taken()); the watcher then polls again, so the descriptor
    comes back at once while items are left. A yes seen by a poll that raced with a take counts
    only if no item was taken meanwhile, so that the descriptor never points at a taken item.
    Without a direction (a write-only end) it never becomes readable, as nothing comes."""

    def __init__(self, inbox):
        self._fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._inbox = inbox
        self._changed = threading.Condition()
        self._set = False
        self._taken = 0  # items taken so far
        self._stopping = False
        self._thread = None
        if inbox is not None:
            _watch_at_exit(self)
            self._thread = threading.Thread(target=self._watch, name="fiber pipe end", daemon=True)
            self._thread.start()

    def fileno(self):
        return self._fd

    def taken(self):
        """The reader took an item: readable again only once the watcher sees another."""
        with self._changed:
            self._taken += 1
            if self._set:
                os.eventfd_read(self._fd)
                self._set = False
                self._changed.notify()

    def stay_set(self):
        """Readable from now on (the other end's mark was read: recv() raises at once)."""
        self.stop()
        with self._changed:
            self._signal()

    def stop(self):
        """Stops the watcher (within a poll's slice); the descriptor stays as it is."""
        with self._changed:
            self._stopping = True
            self._changed.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        _watched.discard(self)

    def close(self):
        self.stop()
        os.close(self._fd)

    def _signal(self):
        if not self._set:
            self._set = True
            os.eventfd_write(self._fd, 1)

    def _watch(self):
        while True:
            with self._changed:
                while self._set and not self._stopping:
                    self._changed.wait()
                if self._stopping:
                    return
                taken = self._taken
            try:
                there = self._inbox.poll(_WATCH_SECONDS)
            except Exception:  # e.g. another process reads this direction: recv() raises it
                there = True
            with self._changed:
                if there and self._taken == taken and not self._stopping:
                    self._signal()


def _watch_at_exit(readiness):
    """`readiness`'s watcher is stopped at exit, before the runtime ends (atexit runs its calls
    last registered first, and the runtime's was registered when the first Pipe was made)."""
    global _stop_registered
    with _watched_lock:
        _watched.add(readiness)
        if not _stop_registered:
            atexit.register(_stop_watchers)
            _stop_registered = True


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
        self._readiness = None  # made by the first fileno()
        self._readiness_lock = threading.Lock()

    @property
    def closed(self):
        """True once close() was called."""
        return self._closed

    @property
    def readable(self):
        """False for the writing end of a one-way Pipe."""
        return self._readable

    @property
    def writable(self):
        """False for the reading end of a one-way Pipe."""
        return self._writable

    def send(self, obj):
        """Sends `obj` (pickled with cloudpickle) to the other end. FiberError once the end it sends
        to is gone; waits while 16 MiB wait for an end nobody has read yet."""
        self.send_bytes(cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def recv(self):
        """The next object the other end sent, waiting for it; EOFError once the other end is
        closed or its Process has ended."""
        return pickle.loads(self.recv_bytes())

    def send_bytes(self, buf, offset=0, size=None):
        """Sends `size` bytes of the buffer `buf` from `offset` (all of it by default) as one
        message."""
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
        """The next message sent with send_bytes(), as bytes; OSError (and the end closed) if it is
        longer than `maxlength`."""
        self._check_readable()
        if maxlength is not None and maxlength < 0:
            raise ValueError("negative maxlength")
        message = self._take()
        if maxlength is not None and len(message) > maxlength:
            self.close()
            raise OSError("bad message length")
        return message

    def recv_bytes_into(self, buf, offset=0):
        """Reads the next message into the writable buffer `buf` at `offset` and returns its length;
        multiprocessing.BufferTooShort (holding the message) if it does not fit."""
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

    def fileno(self):
        """A descriptor readable while recv() would not wait, for multiprocessing.connection.wait
        and select. On a readable end, the first call makes this process the one that reads it
        (a watcher thread polls it), as a recv() does."""
        self._check_open()
        with self._readiness_lock:
            if self._readiness is None:
                self._readiness = _Readiness(self._inbox if self._readable else None)
                if self._at_end:
                    self._readiness.stay_set()
        return self._readiness.fileno()

    def close(self):
        """Closes this end: the other end's recv() then raises EOFError."""
        if self._closed:
            return
        self._closed = True
        self._send_end()
        if self._readiness is not None:
            self._readiness.close()

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
                if self._readiness is not None:
                    self._readiness.taken()
                return message[1:]
            self._at_end = True
            if self._readiness is not None:
                self._readiness.stay_set()
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
