"""pool.map_reduce(f, items, op): the bytes of a reduction's items and partial results.

The C++ reduction (fiber::Pool::map_reduce) folds partial results with a registered task
R op(R, R) wherever the tree puts the fold: in the task process that ran a chunk, in a task
process of the node for the node's chunks, in the master for the nodes' values. Its R here is
bytes: the pickled operation and an outcome (fiber/_calls.py), so that any process that folds
finds the Python `op` in what it folds. An outcome that raised stays the fold's value, so the
first failed item (in the fold's order, that of the items) is what the master raises; so is an
exception of `op` itself.
"""

import atexit
import pickle
import threading

from fiber import _calls
from fiber.exceptions import TimeoutError


def _partial(operation, outcome):
    # An outcome's frames pickled in-band: a partial result is one bytes object, as C++'s R.
    return pickle.dumps((operation, outcome), protocol=pickle.HIGHEST_PROTOCOL)


def encode_item(operation, call):
    """A map_reduce item: the pickled operation and the call of f on the item (its frames)."""
    return pickle.dumps((operation, call), protocol=pickle.HIGHEST_PROTOCOL)


def run_item(item):
    """In a task process: the item's partial result (f's outcome, raised or not)."""
    operation, call = pickle.loads(item)
    return _partial(operation, _calls.run_call(call))


def combine(left, right):
    """op(left's value, right's value) as a partial result; a raised outcome wins, left first."""
    operation, left_outcome = pickle.loads(left)
    _, right_outcome = pickle.loads(right)
    for outcome in (left_outcome, right_outcome):
        if _calls.raised(outcome):
            return _partial(operation, outcome)
    values = (_calls.value_of(left_outcome)[0], _calls.value_of(right_outcome)[0])
    return _partial(operation, _calls.run_call(_calls.encode_call(operation, [values], star=True)))


def value_of(partial):
    """The reduction's value, or raises the first failed item's (or op's) exception."""
    return _calls.value_of(pickle.loads(partial)[1])[0]


# The map_reduce_async results whose thread may still run, and whether the exit ends them.
_running = set()
_running_lock = threading.Lock()
_end_registered = False


def _end_running():
    """At exit, before the runtime ends (atexit calls the last registered first, and the
    runtime's was registered by the first pool): each running reduction's pool is terminated,
    as the exit would, and its thread joined, so that no thread is inside the C++ pool, or drops
    the last reference to it, once the runtime has ended."""
    with _running_lock:
        running = list(_running)
    for result in running:
        result._terminate_pool()
    for result in running:
        result._driver.join()


class ReductionResult:
    """What pool.map_reduce_async returns: multiprocessing's AsyncResult for one value.

    The C++ reduction moves on only while someone waits for it (fiber::detail::ReductionCall),
    so a thread of its own waits for it as map_reduce does (without the GIL, in slices, taking
    the pool's turn a slice at a time) and then calls the callback or error_callback, as the
    pool's result-handler thread does for map_async. Callers wait on an event, which Ctrl-C
    interrupts. `terminate_pool` terminates the pool it runs on (at exit: _end_running)."""

    def __init__(self, reduce, callback, error_callback, terminate_pool):
        global _end_registered
        self._done = threading.Event()
        self._value = None
        self._error = None
        self._callback = callback
        self._error_callback = error_callback
        self._terminate_pool = terminate_pool
        self._driver = threading.Thread(
            target=self._drive, args=(reduce,), name="fiber map_reduce_async", daemon=True
        )
        with _running_lock:
            _running.add(self)
            if not _end_registered:
                atexit.register(_end_running)
                _end_registered = True
        self._driver.start()

    def _drive(self, reduce):
        try:
            self._value = value_of(reduce())
        except BaseException as error:  # re-raised by get(), as a task's
            self._error = error
        try:
            if self._error is None:
                if self._callback is not None:
                    self._callback(self._value)
            elif self._error_callback is not None:
                self._error_callback(self._error)
        finally:
            with _running_lock:
                _running.discard(self)
            self._done.set()

    def ready(self):
        return self._done.is_set()

    def successful(self):
        if not self.ready():
            raise ValueError(f"{self!r} not ready")
        return self._error is None

    def wait(self, timeout=None):
        self._done.wait(timeout)

    def get(self, timeout=None):
        self.wait(timeout)
        if not self.ready():
            raise TimeoutError("fiber: the map_reduce's value did not come within the timeout")
        if self._error is not None:
            raise self._error
        return self._value
