"""fiber.Queue, SimpleQueue and JoinableQueue: multiprocessing's queues on the master's queue
broker (fiber::Queue's, docs/design.md "Processes, queues and pipes"), of cloudpickled objects.

A queue is made in the master and pickles as its address, so that one passed to a Process or a
pool task reaches the same queue. Puts to an unbounded queue return at once and this process's
feeder thread sends them, as multiprocessing's; a process sees its own puts at its next get.
Every wait releases the GIL and Ctrl-C ends it.
"""

import pickle
import queue

import cloudpickle

from fiber import _fiber, _runtime
from fiber.exceptions import NotSupportedOnCluster

# JoinableQueue's ledger: one token per put and per task_done of a process other than the
# queue's maker, which adds them up.
_PUT, _DONE = b"+", b"-"
# How many ledger tokens one call takes at most while the maker adds them up.
_LEDGER_BATCH = 4096


def _dumps(obj):
    return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _timeout(block, timeout):
    """multiprocessing's (block, timeout) as a wait: 0 (do not wait), None (no limit) or
    seconds, a negative timeout counting as 0."""
    if not block:
        return 0.0
    if timeout is None:
        return None
    return max(timeout, 0.0)


class Queue:
    """multiprocessing.Queue(maxsize): maxsize <= 0 is unbounded."""

    def __init__(self, maxsize=0):
        _runtime.start("a Queue")
        self._maxsize = max(maxsize, 0)
        self._channel = _fiber.QueueChannel(self._maxsize)
        self._closed = False

    def put(self, obj, block=True, timeout=None):
        """Puts `obj` (pickled with cloudpickle), waiting for room in a bounded queue as
        multiprocessing's (block, timeout) say; queue.Full if there is none."""
        self._check_open()
        if not self._channel.put(_dumps(obj), _timeout(block, timeout)):
            raise queue.Full

    def get(self, block=True, timeout=None):
        """Takes the next item, waiting for one as (block, timeout) say; queue.Empty if none
        came."""
        self._check_open()
        item = self._channel.get(_timeout(block, timeout))
        if item is None:
            raise queue.Empty
        return pickle.loads(item)

    def put_nowait(self, obj):
        """put(obj, False): queue.Full at once if there is no room."""
        return self.put(obj, False)

    def get_nowait(self):
        """get(False): queue.Empty at once if no item is there."""
        return self.get(False)

    def qsize(self):
        """Approximate, as multiprocessing's: others put and get meanwhile."""
        return self._channel.size()

    def empty(self):
        """True if no item is there now (approximate, as qsize())."""
        return self.qsize() == 0

    def full(self):
        """True if a bounded queue has maxsize items now (approximate, as qsize())."""
        return self._maxsize > 0 and self.qsize() >= self._maxsize

    def close(self):
        """This process puts and gets no more (the items it put still reach the queue)."""
        self._closed = True

    def join_thread(self):
        """Waits until the items this process put are in the queue (its feeder has sent them)."""
        assert self._closed, f"Queue {self!r} not closed"
        _fiber.flush_queues()

    def cancel_join_thread(self):
        """Accepted for multiprocessing's programs: fiber's feeder never keeps a process from
        ending (what it holds is sent at the task's or Process's end; only a crash loses it)."""

    def _check_open(self):
        if self._closed:
            raise ValueError(f"Queue {self!r} is closed")

    def __getstate__(self):
        return {"_maxsize": self._maxsize, "_channel": self._channel}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._closed = False


class SimpleQueue:
    """multiprocessing.SimpleQueue: unbounded, without timeouts."""

    def __init__(self):
        _runtime.start("a SimpleQueue")
        self._channel = _fiber.QueueChannel(0)
        self._closed = False

    def put(self, obj):
        """Puts `obj` (pickled with cloudpickle)."""
        self._check_open()
        self._channel.put(_dumps(obj), None)

    def get(self):
        """Takes the next item, waiting for one."""
        self._check_open()
        return pickle.loads(self._channel.get(None))

    def empty(self):
        """True if no item is there now."""
        self._check_open()
        return self._channel.size() == 0

    def close(self):
        """This process uses the queue no more: later calls raise OSError."""
        self._closed = True

    def _check_open(self):
        if self._closed:
            raise OSError("handle is closed")  # multiprocessing's closed connection

    def __getstate__(self):
        return {"_channel": self._channel}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._closed = False


class JoinableQueue(Queue):
    """multiprocessing.JoinableQueue: join() waits until every item put was task_done().

    The count of unfinished items is kept by the process that made the queue (the master),
    which adds up the tokens that puts and task_done() calls elsewhere put on a second queue
    (a put's token goes first, so the count never misses an item a consumer holds). join() is
    for that process; a task_done() too many is seen there.
    """

    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self._ledger = _fiber.QueueChannel(0)
        self._maker = True
        self._unfinished = 0

    def put(self, obj, block=True, timeout=None):
        """Queue.put(), counting the item as unfinished until a task_done() for it."""
        self._check_open()
        self._count(_PUT)
        try:
            super().put(obj, block, timeout)
        except queue.Full:
            self._count(_DONE)
            raise

    def task_done(self):
        """Marks one item taken with get() as done. Called more often than items were put, it is a
        ValueError in the process that made the queue."""
        if not self._maker:
            self._ledger.put(_DONE, None)
            return
        self._add_up()
        if self._unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished -= 1

    def join(self):
        """Waits until every item put was marked task_done(); in the process that made the queue."""
        if not self._maker:
            raise NotSupportedOnCluster(
                "fiber: JoinableQueue.join() waits in the process that made the queue (the "
                "master), which counts the unfinished items"
            )
        self._add_up()
        while self._unfinished > 0:
            self._add_token(self._ledger.get(None))
            self._add_up()

    def _count(self, token):
        if self._maker:
            self._add_token(token)
            return
        self._ledger.put(token, None)
        if self._maxsize > 0:
            # A bounded put goes straight to the broker, past the feeder holding the token.
            _fiber.flush_queues()

    def _add_up(self):
        while tokens := self._ledger.take_all(_LEDGER_BATCH):
            for token in tokens:
                self._add_token(token)

    def _add_token(self, token):
        self._unfinished += 1 if token == _PUT else -1

    def __getstate__(self):
        return {**super().__getstate__(), "_ledger": self._ledger}

    def __setstate__(self, state):
        super().__setstate__(state)
        self._maker = False
