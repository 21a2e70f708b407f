"""fiber.Pool: multiprocessing.Pool's methods over fiber's C++ pool (fiber._fiber.Pool).

Each call's function is pickled once, and its items go in batches, each a call's frames
(fiber/_calls.py) that the C++ pool runs as one item of the task fiber_python_call in the
workers' task processes: a map's chunk is one batch, as multiprocessing's chunk is one task, so
that the master and the task processes pickle once per chunk rather than once per item. Waiting
happens in C++ without the GIL; callbacks run on the pool's result-handler thread with it.
"""

import math

from fiber import _calls, _fiber, _runtime

_RUN, _CLOSE, _TERMINATE = "RUN", "CLOSE", "TERMINATE"
# multiprocessing's default for imap and imap_unordered: one item per chunk.
_IMAP_CHUNKSIZE = 1
# fiber's chunksize for "choose it from measured task times".
_AUTOMATIC_CHUNKSIZE = 0
# A map without a chunksize goes in this many batches per worker, which fiber's automatic chunks
# then balance: fewer would leave a worker idle behind a long batch at the end (multiprocessing's
# default makes 4 chunks per worker), more would pickle more often.
_BATCHES_PER_WORKER = 16


class AsyncResult:
    """What apply_async, map_async and starmap_async return (multiprocessing's AsyncResult)."""

    def __init__(self, outcomes, single):
        self._outcomes = outcomes
        self._single = single

    def get(self, timeout=None):
        values = _values(self._outcomes.get(timeout))
        return values[0] if self._single else values

    def wait(self, timeout=None):
        self._outcomes.wait(timeout)

    def ready(self):
        return self._outcomes.ready()

    def successful(self):
        if not self.ready():
            raise ValueError(f"{self!r} not ready")
        if not self._outcomes.successful():
            return False
        return not any(_calls.raised(outcome) for outcome in self._outcomes.get())


class IMapIterator:
    """What imap and imap_unordered return: results as they come, `next(timeout)` as Python's."""

    def __init__(self, stream):
        self._stream = stream

    def __iter__(self):
        return self

    def next(self, timeout=None):
        outcome = self._stream.next(timeout)
        if outcome is None:
            raise StopIteration
        return _calls.value_of(outcome)[0]

    __next__ = next


def _values(outcomes):
    """The values of batches' outcomes, in order; raises the first batch's error."""
    values = []
    for outcome in outcomes:
        values.extend(_calls.value_of(outcome))
    return values


def _on_done(single, callback, error_callback):
    """What the C++ pool calls when a call is done: the user's callback or error_callback."""
    if callback is None and error_callback is None:
        return None

    def on_done(outcomes, error):
        if error is None:
            failed = [outcome for outcome in outcomes if _calls.raised(outcome)]
            if not failed:
                if callback is not None:
                    values = _values(outcomes)
                    callback(values[0] if single else values)
                return
            error = _calls.exception_of(failed[0])
        if error_callback is not None:
            error_callback(error)

    return on_done


class Pool:
    """multiprocessing.Pool on fiber's workers (processes=None: one per processor slot)."""

    def __init__(self, processes=None, initializer=None, initargs=(), maxtasksperchild=None):
        if processes is not None and processes < 1:
            raise ValueError("Number of processes must be at least 1")
        if initializer is not None and not callable(initializer):
            raise TypeError("initializer must be a callable")
        if maxtasksperchild is not None and (
            not isinstance(maxtasksperchild, int) or maxtasksperchild <= 0
        ):
            raise ValueError("maxtasksperchild must be a positive int or None")
        _runtime.start()
        self._pool = _fiber.Pool(
            processes or 0, _calls.encode_initializer(initializer, initargs), maxtasksperchild
        )
        self._processes = processes or self._pool.size()
        self._state = _RUN
        _runtime.track(self)

    def _check_running(self):
        if self._state != _RUN:
            raise ValueError("Pool not running")

    def _submit(self, func, batches, star, kwargs, chunksize, callback, error_callback, single):
        """Runs `func` over batches of items (with `star`, of argument tuples), each batch one item
        of the C++ pool."""
        self._check_running()
        function_bytes = _calls.pickled_function(func)
        calls = [_calls.encode_call(function_bytes, batch, star, kwargs) for batch in batches]
        on_done = _on_done(single, callback, error_callback)
        return AsyncResult(self._pool.map_async(calls, chunksize, on_done), single)

    def _submit_map(self, func, items, star, chunksize, callback, error_callback):
        # A given chunksize: one batch per chunk, each a chunk of fiber's (maxtasksperchild counts
        # it as one task, as Python does). Automatic: batches that fiber chunks by their times.
        if chunksize:
            size, fiber_chunksize = chunksize, 1
        else:
            size = max(1, math.ceil(len(items) / (_BATCHES_PER_WORKER * self._processes)))
            fiber_chunksize = _AUTOMATIC_CHUNKSIZE
        batches = [items[i:i + size] for i in range(0, len(items), size)]
        return self._submit(
            func, batches, star, {}, fiber_chunksize, callback, error_callback, single=False
        )

    def apply(self, func, args=(), kwds={}):
        return self.apply_async(func, args, kwds).get()

    def apply_async(self, func, args=(), kwds={}, callback=None, error_callback=None):
        return self._submit(
            func, [[tuple(args)]], True, dict(kwds), 1, callback, error_callback, single=True
        )

    def map(self, func, iterable, chunksize=None):
        return self.map_async(func, iterable, chunksize).get()

    def map_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        return self._submit_map(func, list(iterable), False, chunksize, callback, error_callback)

    def starmap(self, func, iterable, chunksize=None):
        return self.starmap_async(func, iterable, chunksize).get()

    def starmap_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        items = [tuple(args) for args in iterable]
        return self._submit_map(func, items, True, chunksize, callback, error_callback)

    def _imap(self, func, iterable, chunksize, ordered):
        self._check_running()
        if chunksize < 1:
            raise ValueError("Chunksize must be 1+, not {0:n}".format(chunksize))
        function_bytes = _calls.pickled_function(func)
        # Read lazily by the C++ pool's feeder thread, a bounded way ahead of the results.
        calls = (_calls.encode_call(function_bytes, [item]) for item in iterable)
        return IMapIterator(self._pool.imap(calls, chunksize, ordered))

    def imap(self, func, iterable, chunksize=_IMAP_CHUNKSIZE):
        return self._imap(func, iterable, chunksize, ordered=True)

    def imap_unordered(self, func, iterable, chunksize=_IMAP_CHUNKSIZE):
        return self._imap(func, iterable, chunksize, ordered=False)

    def close(self):
        if self._state == _RUN:
            self._state = _CLOSE
            self._pool.close()

    def terminate(self):
        if self._state != _TERMINATE:
            self._state = _TERMINATE
            if self._pool is not None:
                self._pool.terminate()
                self._release()

    def join(self):
        if self._state == _RUN:
            raise ValueError("Pool is still running")
        if self._pool is not None:
            self._pool.join()
            self._release()

    def _release(self):
        # The C++ pool holds its workers until it is destroyed: without it they go back to the
        # runtime, parked, and the next Pool takes them instead of spawning (as multiprocessing's
        # workers are gone after terminate or join).
        self._pool = None

    def __enter__(self):
        self._check_running()
        return self

    def __exit__(self, *exc_info):
        self.terminate()
