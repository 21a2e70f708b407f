"""fiber.Pool: multiprocessing.Pool's methods over fiber's C++ pool (fiber._fiber.Pool).

Each call's function is pickled once, each item becomes a call's frames (fiber/_calls.py), and the
C++ pool runs them as the task fiber_python_call in the workers' task processes. Waiting happens
in C++ without the GIL; callbacks run on the pool's result-handler thread with it.
"""

from fiber import _calls, _fiber, _runtime

_RUN, _CLOSE, _TERMINATE = "RUN", "CLOSE", "TERMINATE"
# multiprocessing's default for imap and imap_unordered: one item per chunk.
_IMAP_CHUNKSIZE = 1
# fiber's chunksize for "choose it from measured task times".
_AUTOMATIC_CHUNKSIZE = 0


class AsyncResult:
    """What apply_async, map_async and starmap_async return (multiprocessing's AsyncResult)."""

    def __init__(self, outcomes, single):
        self._outcomes = outcomes
        self._single = single

    def get(self, timeout=None):
        values = [_calls.value_of(outcome) for outcome in self._outcomes.get(timeout)]
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
        return _calls.value_of(outcome)

    __next__ = next


def _on_done(single, callback, error_callback):
    """What the C++ pool calls when a call is done: the user's callback or error_callback."""
    if callback is None and error_callback is None:
        return None

    def on_done(outcomes, error):
        if error is None:
            failed = [outcome for outcome in outcomes if _calls.raised(outcome)]
            if not failed:
                if callback is not None:
                    values = [_calls.value_of(outcome) for outcome in outcomes]
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
        self._state = _RUN
        _runtime.track(self)

    def _check_running(self):
        if self._state != _RUN:
            raise ValueError("Pool not running")

    def _submit(self, func, argument_tuples, chunksize, callback, error_callback, single):
        self._check_running()
        function_bytes = _calls.pickled_function(func)
        calls = [
            _calls.encode_call(function_bytes, args, kwargs) for args, kwargs in argument_tuples
        ]
        on_done = _on_done(single, callback, error_callback)
        return AsyncResult(self._pool.map_async(calls, chunksize, on_done), single)

    def apply(self, func, args=(), kwds={}):
        return self.apply_async(func, args, kwds).get()

    def apply_async(self, func, args=(), kwds={}, callback=None, error_callback=None):
        return self._submit(
            func, [(tuple(args), dict(kwds))], 1, callback, error_callback, single=True
        )

    def map(self, func, iterable, chunksize=None):
        return self.map_async(func, iterable, chunksize).get()

    def map_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        items = [((item,), {}) for item in iterable]
        return self._submit(
            func, items, chunksize or _AUTOMATIC_CHUNKSIZE, callback, error_callback, single=False
        )

    def starmap(self, func, iterable, chunksize=None):
        return self.starmap_async(func, iterable, chunksize).get()

    def starmap_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        items = [(tuple(args), {}) for args in iterable]
        return self._submit(
            func, items, chunksize or _AUTOMATIC_CHUNKSIZE, callback, error_callback, single=False
        )

    def _imap(self, func, iterable, chunksize, ordered):
        self._check_running()
        if chunksize < 1:
            raise ValueError("Chunksize must be 1+, not {0:n}".format(chunksize))
        function_bytes = _calls.pickled_function(func)
        # Read lazily by the C++ pool's feeder thread, a bounded way ahead of the results.
        calls = (_calls.encode_call(function_bytes, (item,), {}) for item in iterable)
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
