"""pool.broadcast(f, *args, **kwargs): f run once in every task process of the pool, and in every
task process that starts later (a new worker, a crash's replacement, maxtasksperchild).

The C++ pool replays the latest broadcast of each C++ task in new task processes, and every
Python broadcast is the one task fiber_python_broadcast. So that a newcomer still runs the
latest call of each Python function (as a C++ newcomer runs the latest of each task), every
broadcast carries the pool's latest call of every function broadcast so far, each with its
number; a task process runs those it has not run yet, in order. A function is known by its
module and qualified name. Large data is better shared once per node with fiber.NodeArray than
broadcast: it would travel again with every later broadcast.
"""

import itertools
import pickle

from fiber import _calls

# Numbers of broadcasts, across the master's pools: a task process never mistakes one pool's
# broadcast for another's.
_numbers = itertools.count()
# In a task process: the highest number it has run, per function.
_run = {}


def function_key(function):
    """What makes two broadcasts "of the same function": its module and qualified name."""
    module = getattr(function, "__module__", None)
    name = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}.{name}"


class Latest:
    """The master's side, one per pool: the latest call of each function broadcast."""

    def __init__(self):
        self._calls = {}  # function key -> (number, call frames)

    def encode(self, function, args, kwargs):
        """The bytes of broadcasting function(*args, **kwargs)."""
        function_bytes = _calls.pickled_function(function)
        call = _calls.encode_call(function_bytes, [tuple(args)], star=True, kwargs=dict(kwargs))
        key = function_key(function)
        self._calls.pop(key, None)  # insertion order is the order in which they run
        self._calls[key] = (next(_numbers), call)
        return pickle.dumps(self._calls, protocol=pickle.HIGHEST_PROTOCOL)


def run(broadcast):
    """In a task process: the calls it has not run, in order. What one raises fails the
    broadcast (fiber.TaskError for the pool's later calls), as in C++."""
    for key, (number, call) in pickle.loads(broadcast).items():
        if _run.get(key, -1) >= number:
            continue
        _run[key] = number
        outcome = _calls.run_call(call)
        if _calls.raised(outcome):
            error = _calls.exception_of(outcome)
            raise RuntimeError(f"broadcast {key} raised {type(error).__name__}: {error}")
