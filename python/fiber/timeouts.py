"""fiber.with_timeout(f, seconds): a function whose every call in a pool has a deadline.

As fiber::with_timeout in C++: an item that runs longer is killed with its task process, tried
again as a crash is (the pool's max_retries), and then fails alone with fiber.TimeoutError; the
call's other items are not affected. The deadline travels with the call, so one pool can run
functions with different deadlines.
"""

import math
import numbers

# Deadlines reach the C++ pool in whole milliseconds.
_MS_PER_SECOND = 1000


def milliseconds(name, seconds, allow_zero):
    """`seconds` (a real number) as whole milliseconds, rounded up so that a short positive time
    is never 0 (which means "no limit" to the C++ pool); one clear error for anything else."""
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, not {type(seconds).__name__}")
    if not math.isfinite(seconds) or seconds < 0 or (seconds == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {bound}, not {seconds!r}")
    return math.ceil(seconds * _MS_PER_SECOND)


class TimedFunction:
    """What with_timeout returns: `function` with its deadline. Calling it calls the function
    (without a deadline: only a pool enforces it)."""

    def __init__(self, function, seconds):
        if not callable(function):
            raise TypeError("with_timeout needs a callable")
        self.function = function
        self.seconds = seconds
        self.timeout_ms = milliseconds("with_timeout's seconds", seconds, allow_zero=False)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __repr__(self):
        return f"with_timeout({self.function!r}, {self.seconds!r})"


def with_timeout(function, seconds):
    """`function` with a deadline of `seconds` for each item it runs in a pool (map, imap,
    apply, ...)."""
    return TimedFunction(function, seconds)


def split(function):
    """(the function to pickle, its deadline in milliseconds: 0 for the pool's task_timeout)."""
    if isinstance(function, TimedFunction):
        return function.function, function.timeout_ms
    return function, 0
