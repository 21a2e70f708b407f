"""How a Python call crosses to a task process, and its outcome back.

A call is cloudpickled (function, args, kwargs): functions travel by value, so lambdas, closures
and functions of __main__ or of `python3 -c` run in workers that never ran the user's script.
Its outcome is one byte (_RETURNED or _RAISED) and the pickled value, or the pickled exception
with the task process's traceback text, which the caller raises with that text as its __cause__,
as multiprocessing does (multiprocessing.pool.RemoteTraceback).
"""

import os
import pickle
import sys
import traceback
from multiprocessing.pool import MaybeEncodingError, RemoteTraceback

import cloudpickle

from fiber import _pickling_notes

_RETURNED = b"\x00"
_RAISED = b"\x01"
# Functions a task process keeps unpickled, keyed by their bytes: a pool's map sends one
# function with every item, and unpickling a closure each time would cost more than small tasks.
_FUNCTIONS_KEPT = 64
_functions = {}


def pickled_function(function):
    """The function's bytes, made once per call of the pool (not once per item)."""
    try:
        return cloudpickle.dumps(function, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        _pickling_notes.note_function(error, function)
        raise


def encode_call(function_bytes, args, kwargs):
    try:
        return cloudpickle.dumps((function_bytes, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        _pickling_notes.note_arguments(error, args, kwargs)
        raise


def master_context():
    """What a worker takes over from the master before it runs the master's functions."""
    return {"sys_path": list(sys.path), "cwd": os.getcwd(), "environ": dict(os.environ)}


def take_master_context(context):
    """In a task process, before the master's functions run: its folder, path and variables."""
    os.chdir(context["cwd"])
    sys.path[:] = context["sys_path"]
    # The master's variables over the worker's own (MPI's settings of the worker process stay).
    os.environ.update(context["environ"])


def encode_initializer(initializer, initargs):
    """A pool's initializer: the master's context, then the user's initializer if any."""
    user_call = None
    if initializer is not None:
        user_call = encode_call(pickled_function(initializer), tuple(initargs), {})
    return pickle.dumps((master_context(), user_call), protocol=pickle.HIGHEST_PROTOCOL)


def _function(function_bytes):
    function = _functions.get(function_bytes)
    if function is None:
        function = pickle.loads(function_bytes)
        if len(_functions) >= _FUNCTIONS_KEPT:
            _functions.clear()
        _functions[function_bytes] = function
    return function


def _unpickled(call):
    """In a task process: the call's function, args and kwargs."""
    try:
        function_bytes, args, kwargs = pickle.loads(call)
        return _function(function_bytes), args, kwargs
    except Exception as error:
        _pickling_notes.note_unpickling(error)
        raise


def flush_output():
    # A task process ends with _exit: what a task printed must leave before.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass


def run_initializer(initializer):
    """In a task process, before the pool's calls. Raises what the user's initializer raises."""
    context, user_call = pickle.loads(initializer)
    take_master_context(context)
    try:
        if user_call is not None:
            function_bytes, args, kwargs = pickle.loads(user_call)
            _function(function_bytes)(*args, **kwargs)
    finally:
        flush_output()


def _pickled_exception(error):
    text = "".join(traceback.format_exception(error))
    try:
        return cloudpickle.dumps((error, text), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as unpicklable:  # the exception cannot travel: multiprocessing's error says so
        stand_in = MaybeEncodingError(unpicklable, error)
        return cloudpickle.dumps((stand_in, text), protocol=pickle.HIGHEST_PROTOCOL)


def _returned(result):
    """The outcome of a call that returned; a result that cannot be pickled fails its item alone,
    with multiprocessing's MaybeEncodingError (what it was, and why it cannot travel)."""
    try:
        return _RETURNED + cloudpickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as unpicklable:
        return _RAISED + _pickled_exception(MaybeEncodingError(unpicklable, result))


def run_call(call):
    """In a task process: the call's outcome. Only an exception outside Exception (SystemExit,
    KeyboardInterrupt) leaves it, and fiber reports it as the task's error."""
    try:
        function, args, kwargs = _unpickled(call)
        result = function(*args, **kwargs)
        return _returned(result)
    except Exception as error:
        return _RAISED + _pickled_exception(error)
    finally:
        flush_output()


def raised(outcome):
    return outcome[:1] == _RAISED


def value_of(outcome):
    """The call's value, or raises its exception with the remote traceback as its __cause__."""
    if not raised(outcome):
        return pickle.loads(memoryview(outcome)[1:])
    error, text = pickle.loads(memoryview(outcome)[1:])
    error.__cause__ = RemoteTraceback(f'\n"""\n{text}"""')
    raise error


def exception_of(outcome):
    """The exception a raised outcome carries, with its remote traceback, not raised."""
    try:
        value_of(outcome)
    except Exception as error:
        return error
    return None
