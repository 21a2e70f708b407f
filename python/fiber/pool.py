"""fiber.Pool: multiprocessing.Pool's methods over fiber's C++ pool (fiber._fiber.Pool).

Each call's function is pickled once, and its items go in batches, each a call's frames
(fiber/_calls.py) that the C++ pool runs as one item of the task fiber_python_call in the
workers' task processes: a map's chunk is one batch, as multiprocessing's chunk is one task, so
that the master and the task processes pickle once per chunk rather than once per item. Waiting
happens in C++ without the GIL; callbacks run on the pool's result-handler thread with it.
"""

import collections
import math
import numbers
import operator
import warnings

from fiber import _broadcasts, _calls, _fiber, _reductions, _runtime, _shape, timeouts
from fiber.exceptions import FiberError, PoolClosed
from fiber.pool_stats import PoolStats, WorkerInfo

_RUN, _CLOSE, _TERMINATE = "RUN", "CLOSE", "TERMINATE"
# multiprocessing's default for imap and imap_unordered: one item per chunk.
_IMAP_CHUNKSIZE = 1
# fiber's chunksize for "choose it from measured task times".
_AUTOMATIC_CHUNKSIZE = 0
# What fiber's errors call the C++ task that runs every Python call (python/src/python_task.cpp),
# where the user knows the function they passed.
_CALL_TASK = "task 'fiber_python_call'"


def _naming(error, function):
    """`error`, from the C++ pool, saying the user's function where it says the task running it."""
    if isinstance(error, FiberError) and error.args and isinstance(error.args[0], str):
        users = error.args[0].replace(_CALL_TASK, f"function '{_name_of(function)}'")
        error.args = (users, *error.args[1:])
    return error


def _name_of(function):
    """How fiber's errors name a function: its __qualname__ (a callable object's repr)."""
    return getattr(function, "__qualname__", None) or repr(function)


def _pickled(function):
    """The function's bytes; what is not callable is refused here with the TypeError its call
    would raise in the worker."""
    if not callable(function):
        raise TypeError(f"'{type(function).__name__}' object is not callable")
    return _calls.pickled_function(function)


class _Pickled:
    """A call's function (its deadline split off, fiber.with_timeout) and its bytes."""

    def __init__(self, func):
        self.function, self.timeout_ms = timeouts.split(func)
        self.data = _pickled(self.function)
        self.timing = _calls.timing_name(self.function)


# A map's C++ items are batches of its items (an apply's, an imap's and a map_reduce's are one
# call each): their run times are learnt apart, under the function's timing name with this after
# it, so that a batch's time is not taken for a call's.
_BATCHES_TIMING = " in batches"


def _map_chunksize(chunksize):
    """map's chunksize for the C++ pool: None is fiber's automatic choice."""
    return _AUTOMATIC_CHUNKSIZE if chunksize is None else _checked_chunksize(chunksize)


def _checked_chunksize(chunksize):
    """imap's check, as multiprocessing's; map gets it too (multiprocessing's map returns a None
    per item for a chunksize below 1), and a chunksize that is not an int is refused as
    multiprocessing refuses it (a ValueError, a TypeError for what cannot be compared)."""
    if chunksize < 1:
        raise ValueError("Chunksize must be 1+, not {0:n}".format(chunksize))
    if not isinstance(chunksize, int):
        raise ValueError(f"Chunksize must be an int, not {chunksize!r}")
    return chunksize


# A map without a chunksize goes in this many batches per worker, which fiber's automatic chunks
# then balance: fewer would leave a worker idle behind a long batch at the end (multiprocessing's
# default makes 4 chunks per worker), more would pickle more often.
_BATCHES_PER_WORKER = 16
# A map or starmap of at least _STEP_MIN_ITEMS items goes in about this many steps per worker
# (Pool._map_in_steps): the workers wait only for the first step's pickling, and the master
# unpickles each step's results while the workers run the later ones; fewer, smaller maps go in
# one step, whose pickling is too short to be worth the calls of more.
_STEPS_PER_WORKER = 8
_STEP_MIN_ITEMS = 4096


def _step_size(items, batches, workers):
    """How many batches a step of Pool._map_in_steps holds (all of them: one step)."""
    if items < 2 * _STEP_MIN_ITEMS:
        return max(1, batches)
    steps = min(_STEPS_PER_WORKER * workers, items // _STEP_MIN_ITEMS)
    return max(1, math.ceil(batches / steps))


class AsyncResult:
    """What apply_async, map_async and starmap_async return (multiprocessing's AsyncResult)."""

    def __init__(self, outcomes, single, function):
        self._outcomes = outcomes
        self._single = single
        self._function = function  # named in fiber's errors

    def get(self, timeout=None):
        """The result (for map_async and starmap_async, the list of results); re-raises a task's
        exception with its type and remote traceback. fiber.TimeoutError if it is not there within
        `timeout` seconds (None: no limit)."""
        outcomes = self._outcomes_within(timeout)
        if self._single:  # apply_async's: one batch of one item
            return _calls.value_of(outcomes[0])[0]
        values = []
        _extend_values(values, outcomes)
        return values

    def _get_into(self, values, timeout=None):
        """get(), its values appended to `values` (a map in steps gathers its steps' values in
        one list, without a list per step to copy)."""
        _extend_values(values, self._outcomes_within(timeout))

    def _outcomes_within(self, timeout):
        """The C++ call's outcomes, once there; fiber's errors name the user's function."""
        try:
            return self._outcomes.get(timeout)
        except FiberError as error:
            _runtime.hold_if_ended_by_exit(error)
            _naming(error, self._function)
            raise

    def wait(self, timeout=None):
        """Waits until the result is there, at most `timeout` seconds (None: no limit)."""
        self._outcomes.wait(timeout)

    def ready(self):
        """True once the result is there."""
        return self._outcomes.ready()

    def successful(self):
        """True if the call raised nothing; ValueError before the result is ready."""
        if not self.ready():
            raise ValueError(f"{self!r} not ready")
        if not self._outcomes.successful():
            return False
        return not any(_calls.raised(outcome) for outcome in self._outcomes.get())


class IMapIterator:
    """What imap and imap_unordered return: results as they come, `next(timeout)` as Python's."""

    def __init__(self, stream, function):
        self._stream = stream
        self._function = function  # named in fiber's errors

    def __iter__(self):
        return self

    def next(self, timeout=None):
        """The next result, re-raising a task's exception at its position; StopIteration after the
        last. fiber.TimeoutError if none comes within `timeout` seconds (the iterator is unchanged:
        call it again)."""
        try:
            outcome = self._stream.next(timeout)
        except FiberError as error:
            _runtime.hold_if_ended_by_exit(error)
            _naming(error, self._function)
            raise
        if outcome is None:
            raise StopIteration
        return _calls.value_of(outcome)[0]

    __next__ = next


def _extend_values(values, outcomes):
    """Appends the values of batches' outcomes to `values`, in order; raises the first batch's
    error."""
    for outcome in outcomes:
        values.extend(_calls.value_of(outcome))


def _sequence(iterable):
    """A map's items: a list, tuple or range as it is, any other iterable read into a list. The
    batches are slices of it: a list's or tuple's copy their items, a range's are ranges, a few
    bytes to pickle whatever their length (multiprocessing too reads an iterable with a length
    as it is, where a list of a map's 2,000,000 ints cost 59 ms of its 260)."""
    return iterable if type(iterable) in (list, tuple, range) else list(iterable)


def _on_done(single, callback, error_callback, function):
    """What the C++ pool calls when a call is done: the user's callback or error_callback."""
    if callback is None and error_callback is None:
        return None

    def on_done(outcomes, error):
        if error is None:
            failed = [outcome for outcome in outcomes if _calls.raised(outcome)]
            if not failed:
                if callback is not None:
                    values = []
                    _extend_values(values, outcomes)
                    callback(values[0] if single else values)
                return
            error = _calls.exception_of(failed[0])
        if error_callback is not None:
            error_callback(_naming(error, function))

    return on_done


def _count(name, value, least):
    """An option that counts something: an int (not a bool) of at least `least`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be >= {least}, not {value}")
    return int(value)


class Pool:
    """multiprocessing.Pool on fiber's workers (processes=None: one per processor slot), with
    fiber's own options after the `*` (fiber::PoolOptions; times in seconds): max_retries, how
    often an item whose task process crashed or timed out runs again; task_timeout, the longest
    an item may run (None: no limit); worker_timeout, how long a busy worker may be silent
    before it is taken for dead; max_workers > 0 autoscales between min_workers and
    max_workers, parking a worker idle for scale_down_after. What each worker needs
    (fiber::WorkerShape; Uber Fiber's @meta, Ray's num_cpus/num_gpus): cores, bound to it and
    told to its thread pools (0: one slot, not bound); memory, its task process's limit in bytes
    or a string like "8GiB" (0 or None: none); gpus, devices of its node it gets to itself."""

    def __init__(
        self,
        processes=None,
        initializer=None,
        initargs=(),
        maxtasksperchild=None,
        *,
        max_retries=2,
        task_timeout=None,
        worker_timeout=10.0,
        min_workers=0,
        max_workers=0,
        scale_down_after=5.0,
        cores=0,
        memory=None,
        gpus=0,
    ):
        if processes is not None and processes < 1:
            raise ValueError("Number of processes must be at least 1")
        if processes is not None:
            processes = operator.index(processes)  # multiprocessing's TypeError for a float
        if initializer is not None and not callable(initializer):
            raise TypeError("initializer must be a callable")
        if maxtasksperchild is not None and (
            not isinstance(maxtasksperchild, int) or maxtasksperchild <= 0
        ):
            raise ValueError("maxtasksperchild must be a positive int or None")
        sizes = {
            "max_retries": _count("max_retries", max_retries, 0),
            "min_workers": _count("min_workers", min_workers, 0),
            "max_workers": _count("max_workers", max_workers, 0),
        }
        if sizes["max_workers"] > 0 and sizes["min_workers"] > sizes["max_workers"]:
            raise ValueError("autoscaling needs min_workers <= max_workers")
        shape = _shape.worker_shape(cores, memory, gpus)
        times_ms = {
            "task_timeout_ms": 0
            if task_timeout is None
            else timeouts.milliseconds("task_timeout", task_timeout, allow_zero=False),
            "worker_timeout_ms": timeouts.milliseconds(
                "worker_timeout", worker_timeout, allow_zero=False
            ),
            "scale_down_after_ms": timeouts.milliseconds(
                "scale_down_after", scale_down_after, allow_zero=True
            ),
        }
        _runtime.start()
        self._pool = _fiber.Pool(
            processes or 0,
            _calls.encode_initializer(initializer, initargs),
            # Without a user's initializer only the master's context: the same bytes while the
            # folder, path and environment are, which a parked worker takes ahead.
            initializer is None,
            maxtasksperchild,
            **sizes,
            **times_ms,
            **shape,
        )
        self._broadcasts = _broadcasts.Latest()
        self._deadline_per_item = task_timeout is not None
        self._tasks_counted = maxtasksperchild is not None
        self._state = _RUN
        _runtime.track(self)

    def _check_running(self):
        if self._state != _RUN:
            raise ValueError("Pool not running")

    def _submit(self, func, batches, star, chunksize, callback, error_callback):
        """Runs `func` over batches of items (with `star`, of argument tuples), each batch one item
        of the C++ pool."""
        self._check_running()
        return self._submit_pickled(
            _Pickled(func), batches, star, chunksize, callback, error_callback
        )

    def _submit_pickled(self, pickled, batches, star, chunksize, callback, error_callback):
        """_submit with the function pickled already (_Pickled)."""
        calls = [_calls.encode_call(pickled.data, batch, star) for batch in batches]
        on_done = _on_done(False, callback, error_callback, pickled.function)
        timing = pickled.timing + _BATCHES_TIMING
        outcomes = self._pool.map_async(calls, chunksize, on_done, pickled.timeout_ms, timing)
        return AsyncResult(outcomes, False, pickled.function)

    def _batches(self, func, items, chunksize):
        """The items' batches and fiber's chunksize for them. A given chunksize: one batch per
        chunk, which fiber's automatic chunks carry several to a worker at once, as its run
        messages carry several chunks (each batch still its own call, with its own outcome); with
        maxtasksperchild, each batch a chunk of fiber's, which counts it as one task, as Python
        does. Automatic: batches that fiber chunks by their times. A deadline is per item
        (with_timeout, task_timeout): then every item is a batch."""
        self._check_running()
        chunksize = _map_chunksize(chunksize)
        if self._deadline_per_item or isinstance(func, timeouts.TimedFunction):
            size, fiber_chunksize = 1, chunksize
        elif chunksize != _AUTOMATIC_CHUNKSIZE:
            size, fiber_chunksize = chunksize, 1 if self._tasks_counted else _AUTOMATIC_CHUNKSIZE
        else:
            workers = max(1, self._pool.size())
            size = max(1, math.ceil(len(items) / (_BATCHES_PER_WORKER * workers)))
            fiber_chunksize = _AUTOMATIC_CHUNKSIZE
        return [items[i : i + size] for i in range(0, len(items), size)], fiber_chunksize

    def _submit_map(self, func, items, star, chunksize, callback, error_callback):
        batches, fiber_chunksize = self._batches(func, items, chunksize)
        return self._submit(func, batches, star, fiber_chunksize, callback, error_callback)

    def _map_in_steps(self, func, items, star, chunksize):
        """map and starmap: as _submit_map(...).get(), but pipelined. The batches go in steps,
        each its own call of the C++ pool: the workers run the first step while the next ones are
        pickled, and each step's results are unpickled as soon as it is done, while the workers
        run the later ones (docs/design.md "The Python front end", "A map in steps")."""
        batches, fiber_chunksize = self._batches(func, items, chunksize)
        step = _step_size(len(items), len(batches), max(1, self._pool.size()))
        pickled = _Pickled(func)  # once for every step
        values = []
        pending = collections.deque()
        for first in range(0, len(batches), step):
            pending.append(
                self._submit_pickled(
                    pickled, batches[first : first + step], star, fiber_chunksize, None, None
                )
            )
            while pending and pending[0].ready():
                pending.popleft()._get_into(values)
        while pending:
            pending.popleft()._get_into(values)
        return values

    def apply(self, func, args=(), kwds={}):
        """func(*args, **kwds) in a task process, waiting for its result."""
        return self.apply_async(func, args, kwds).get()

    def apply_async(self, func, args=(), kwds={}, callback=None, error_callback=None):
        """apply() without waiting: an AsyncResult. `callback` gets the result, `error_callback` the
        exception, in the master, once it is there."""
        # One call as one batch, without _submit's list of batches: the paper's rounds make one
        # per task, and the caller's Python is on their path (docs/design.md "The Python front
        # end", "A round's Python").
        self._check_running()
        function, timeout_ms = timeouts.split(func)
        call = _calls.encode_apply(_pickled(function), tuple(args), kwds)
        on_done = _on_done(True, callback, error_callback, function)
        timing = _calls.timing_name(function)
        outcomes = self._pool.map_async([call], 1, on_done, timeout_ms, timing)
        return AsyncResult(outcomes, True, function)

    def map(self, func, iterable, chunksize=None):
        """[func(x) for x in iterable] on the workers, in order; raises the first failed item's
        exception. chunksize None: batches that fiber's automatic chunks balance."""
        return self._map_in_steps(func, _sequence(iterable), False, chunksize)

    def map_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        """map() without waiting: an AsyncResult of the list, with callbacks as apply_async's."""
        return self._submit_map(
            func, _sequence(iterable), False, chunksize, callback, error_callback
        )

    def starmap(self, func, iterable, chunksize=None):
        """[func(*args) for args in iterable] on the workers, in order."""
        return self._map_in_steps(func, [tuple(args) for args in iterable], True, chunksize)

    def starmap_async(self, func, iterable, chunksize=None, callback=None, error_callback=None):
        """starmap() without waiting: an AsyncResult of the list, with callbacks as
        apply_async's."""
        items = [tuple(args) for args in iterable]
        return self._submit_map(func, items, True, chunksize, callback, error_callback)

    def _imap(self, func, iterable, chunksize, ordered):
        self._check_running()
        chunksize = _checked_chunksize(chunksize)
        pickled = _Pickled(func)
        # Read lazily by the C++ pool's feeder thread, a bounded way ahead of the results.
        calls = (_calls.encode_call(pickled.data, [item]) for item in iterable)
        stream = self._pool.imap(calls, chunksize, ordered, pickled.timeout_ms, pickled.timing)
        return IMapIterator(stream, pickled.function)

    def imap(self, func, iterable, chunksize=_IMAP_CHUNKSIZE):
        """An IMapIterator of func(x) for x in iterable, in order, each result as soon as it and the
        ones before it are there. The iterable is read lazily, a bounded way ahead, so an endless
        one works."""
        return self._imap(func, iterable, chunksize, ordered=True)

    def imap_unordered(self, func, iterable, chunksize=_IMAP_CHUNKSIZE):
        """As imap(), but the results in the order they complete."""
        return self._imap(func, iterable, chunksize, ordered=False)

    def map_reduce(self, func, iterable, op, chunksize=None):
        """functools.reduce(op, self.map(func, iterable)), folded where the results are: each
        chunk's results in its task process, each node's chunks on that node, one value per node
        in the master (fiber::Pool::map_reduce; chunksize None: two chunks per worker). `op` must
        be associative (a sum, a concatenation): the value is then the sequential fold's, with
        the same bits for the same hosts and worker counts. The first failed item's exception
        (in item order), or op's, is raised."""
        items, chunksize, timing = self._reduction_items(func, iterable, op, chunksize)
        try:
            partial = self._pool.map_reduce(items, chunksize, timing)
        except PoolClosed as error:
            _runtime.hold_if_ended_by_exit(error)
            raise
        return _reductions.value_of(partial)

    def map_reduce_async(
        self, func, iterable, op, chunksize=None, callback=None, error_callback=None
    ):
        """map_reduce(func, iterable, op, chunksize) without waiting: an AsyncResult-like
        object (get(timeout), wait(timeout), ready(), successful()) whose callback or
        error_callback is called once the value is there, on a thread of its own. Bad input
        raises here, as map_reduce's."""
        items, chunksize, timing = self._reduction_items(func, iterable, op, chunksize)
        pool = self._pool
        return _reductions.ReductionResult(
            lambda: pool.map_reduce(items, chunksize, timing),
            callback,
            error_callback,
            self.terminate,
        )

    def _reduction_items(self, func, iterable, op, chunksize):
        """map_reduce's C++ items, chunksize and timing name; refuses what map_reduce refuses."""
        self._check_running()
        func, op = self._untimed(func, "map_reduce"), self._untimed(op, "map_reduce")
        if not callable(op):
            raise TypeError("map_reduce's op must be a callable of two values")
        chunksize = _map_chunksize(chunksize)
        operation = _pickled(op)
        function_bytes = _pickled(func)
        items = [
            _reductions.encode_item(operation, _calls.encode_call(function_bytes, [item]))
            for item in iterable
        ]
        if not items:
            raise TypeError("map_reduce() of an empty iterable with no initial value")
        return items, chunksize, _calls.timing_name(func)

    def broadcast(self, func, *args, **kwargs):
        """func(*args, **kwargs) once in every task process of the pool, after what each has
        queued, and in every one that starts later (a worker joining, a crash's replacement):
        per-worker state, e.g. a generation's parameters, sent once per worker rather than with
        every task. Returns once sent; every later call of the pool runs after it. If it raises
        in a task process, the pool's later calls fail with fiber.TaskError until the next
        broadcast."""
        self._check_running()
        func = self._untimed(func, "broadcast")
        if not callable(func):
            raise TypeError("broadcast needs a callable")
        self._pool.broadcast(self._broadcasts.encode(func, args, kwargs))

    @staticmethod
    def _untimed(func, call):
        if isinstance(func, timeouts.TimedFunction):
            raise ValueError(
                f"{call} takes no with_timeout function: the pool's task_timeout applies to it"
            )
        return func

    def resize(self, processes):
        """Grows or shrinks the pool to `processes` workers while it runs, losing nothing:
        growing takes parked workers first and spawns the rest (each runs the initializer and
        the broadcasts); shrinking parks workers once their work is done."""
        self._check_running()
        self._pool.resize(_count("processes", processes, 0))

    def stats(self):
        """The pool's counters since its start (fiber.PoolStats)."""
        self._check_live()
        return PoolStats(**self._pool.stats())

    def size(self):
        """The number of workers the pool has now (a method, as in C++: it changes with resize
        and autoscaling)."""
        self._check_live()
        return self._pool.size()

    def workers(self):
        """Where the pool's workers run: a list of fiber.WorkerInfo(id, host, pid)."""
        self._check_live()
        return [WorkerInfo(*worker) for worker in self._pool.workers()]

    def _check_live(self):
        if self._pool is None:
            raise ValueError("Pool not running (terminated or joined)")

    def close(self):
        """Takes no more calls; the work already submitted goes on (join() waits for it)."""
        if self._state == _RUN:
            self._state = _CLOSE
            self._pool.close()

    def terminate(self):
        """Stops now: pending work fails, and the workers go back to the runtime, parked, for the
        next Pool."""
        if self._state != _TERMINATE:
            self._state = _TERMINATE
            if self._pool is not None:
                self._pool.terminate()
                self._release()

    def join(self):
        """Waits until the submitted work is done; needs close() or terminate() first (ValueError
        otherwise)."""
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

    def __del__(self):
        # Dropping a pool that still runs terminates its work with the C++ pool: as
        # multiprocessing's, say so (ResourceWarning, shown under -X dev or -W).
        if getattr(self, "_state", None) == _RUN:
            warnings.warn(
                f"unclosed running multiprocessing pool {self!r}", ResourceWarning, source=self
            )
