"""How a Python call crosses to a task process, and its outcome back.

A call is cloudpickled (function, batch, star, kwargs), the batch a list of items: each the one
argument of a call, or with star its tuple of arguments, called with the kwargs (one for apply, a
chunk of a map's or a starmap's items). Functions travel by value, so lambdas, closures and
functions of __main__ or of `python3 -c` run in workers that never ran the user's script. Its
outcome is one byte (_RETURNED or _RAISED) and the pickled list of values, or the pickled
exception of the first item that raised (the batch stops there, as a chunk of multiprocessing's
map does) with the task process's traceback text, which the caller raises with that text as its
__cause__, as multiprocessing does (multiprocessing.pool.RemoteTraceback).

Both are frames (python/src/frames.hpp): the pickle, then its out-of-band buffers (protocol 5),
so that a numpy array's data is copied once, into the bytes fiber sends, and unpickled over the
received bytes themselves, without a copy.
"""

import ctypes
import functools
import importlib.machinery
import itertools
import os
import pickle
import resource
import sys
import traceback
import types
from multiprocessing.pool import MaybeEncodingError, RemoteTraceback

import cloudpickle

from fiber import _pickling_notes

_RETURNED = b"\x00"
_RAISED = b"\x01"
_RAISED_BYTE = _RAISED[0]  # what indexing a frame gives
# Functions a task process keeps unpickled, keyed by their bytes: a pool's map sends one
# function with every item, and unpickling a closure each time would cost more than small tasks.
_FUNCTIONS_KEPT = 64
_functions = {}


# Functions that pickle itself writes by reference (its module and name), as cloudpickle does for
# them: a module's functions and builtins, not __main__'s, whose workers' __main__ is another
# script, nor those of modules registered with cloudpickle.register_pickle_by_value.
_BY_REFERENCE_TYPES = (types.FunctionType, types.BuiltinFunctionType)


# The modules registered with cloudpickle.register_pickle_by_value (a set that it changes).
_BY_VALUE_MODULES = getattr(cloudpickle.cloudpickle, "_PICKLE_BY_VALUE_MODULES", frozenset())


def _by_reference(function):
    module_name = getattr(function, "__module__", None)
    module = sys.modules.get(module_name)
    return (
        isinstance(function, _BY_REFERENCE_TYPES)
        and module_name != "__main__"
        and getattr(module, "__spec__", None) is not None
        and module_name not in _BY_VALUE_MODULES
    )


# The bytes of functions that went by reference, by function: a pool's calls repeat a few
# functions, whose bytes (their module and name) do not change. Functions of modules only, which
# live as long as their modules anyway; a function that goes by value is pickled at every call,
# since its globals may have changed.
_REFERENCES_KEPT = 256
_references = {}


def pickled_function(function):
    """The function's bytes, made once per call of the pool (not once per item). A function found
    by its module and name gets pickle's bytes, the same as cloudpickle's but made in C (an
    apply_async paid 76 us for cloudpickle's on a cold cache, docs/design.md), kept for its next
    call; any other goes by value."""
    if type(function) in _BY_REFERENCE_TYPES:
        try:
            kept = _references.get(function)
        except TypeError:  # a builtin method of an unhashable object: never by reference
            kept = None
        if kept is not None and function.__module__ not in _BY_VALUE_MODULES:
            return kept
    if _by_reference(function):
        try:
            data = pickle.dumps(function, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            pass  # not found under its name (e.g. replaced after it was made): by value
        else:
            if len(_references) >= _REFERENCES_KEPT:
                _references.clear()
            _references[function] = data
            return data
    try:
        return cloudpickle.dumps(function, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        _pickling_notes.note_function(error, function)
        raise


# Values that pickle's C pickler writes by value itself, as cloudpickle would: a batch of them is
# pickled without cloudpickle, whose pickler costs microseconds to make and calls back into
# Python for every list, tuple and dict (a map of small items paid that per item).
_PLAIN_TYPES = frozenset((int, float, str, bytes, bool, type(None)))
# Past this many items a batch goes to cloudpickle unchecked: its per-call cost is then spread
# over the batch, and checking each item would cost more than it saves.
_PLAIN_BATCH_MOST = 16


def _plain(items, star=False):
    """Whether `items` (with `star`, tuples of arguments) are few and all _PLAIN_TYPES. Loops
    rather than all() over a generator: this runs for every apply and every small batch."""
    if len(items) > _PLAIN_BATCH_MOST:
        return False
    for item in items:
        if star:
            if type(item) is not tuple or not _plain(item):
                return False
        elif type(item) not in _PLAIN_TYPES:
            return False
    return True


# How pickle writes the module name of a global of __main__ (a short string): a value whose
# pickle names __main__ refers to a function or class of its side's __main__, which the other side
# does not have (a worker's __main__ is fiber's script), and goes to cloudpickle, which sends them
# by value. Data that holds these bytes itself only takes cloudpickle's slower way.
_MAIN_REFERENCE = pickle.SHORT_BINUNICODE + bytes([len("__main__")]) + b"__main__"


def _frames(value, plain=False):
    """The pickle of `value` and its out-of-band buffers: frames for fiber._fiber to join.
    `plain`: the caller knows that value holds only _PLAIN_TYPES and plain containers.

    pickle's C pickler first, as pickled_function does for functions: cloudpickle's pickler costs
    microseconds to make and calls back into Python for every object, and a task process pays it
    cold, after its task, on the way of every result that is not plain (a tuple result: 14-22 us
    from the task's end to its answer, against 10-18 with pickle's; docs/design.md, "A task
    process's Python is paid cold"). cloudpickle when pickle cannot (a lambda, a local class), when
    the pickle names __main__, or while modules are registered with
    cloudpickle.register_pickle_by_value (pickle would send their functions by reference). A value
    whose pickling fails in both is pickled twice (its __reduce__ called twice) before its error."""
    if plain:
        return [pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)]
    buffers = []
    if not _BY_VALUE_MODULES:
        try:
            data = pickle.dumps(
                value, protocol=pickle.HIGHEST_PROTOCOL, buffer_callback=buffers.append
            )
        except Exception:  # noqa: BLE001 (whatever pickle refuses goes to cloudpickle)
            buffers.clear()
        else:
            if _MAIN_REFERENCE not in data:
                return [data, *buffers]
            buffers.clear()
    data = cloudpickle.dumps(
        value, protocol=pickle.HIGHEST_PROTOCOL, buffer_callback=buffers.append
    )
    return [data, *buffers]


def _loaded(frames, skip=0):
    """The value of frames (memoryviews that fiber._fiber split, or bytes), past `skip` bytes of
    the first."""
    first = frames[0][skip:] if skip else frames[0]
    if len(frames) == 1:  # no buffers: loads is quicker without the argument
        return pickle.loads(first)
    return pickle.loads(first, buffers=frames[1:])


def encode_call(function_bytes, batch, star=False, kwargs=None):
    """The frames of calling the function on each item of `batch` (with `star`, each a tuple of
    arguments), with `kwargs`."""
    kwargs = kwargs or {}
    try:
        return _frames((function_bytes, batch, star, kwargs), not kwargs and _plain(batch, star))
    except Exception as error:
        for item in batch:  # the first item that cannot be pickled, named as one call's
            args = item if star else (item,)
            try:
                cloudpickle.dumps((args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 (any pickling error: this item is the one)
                _pickling_notes.note_arguments(error, args, kwargs)
                break
        raise


def encode_apply(function_bytes, args, kwds):
    """encode_call(function_bytes, [args], star=True, kwargs=kwds): one call of apply_async,
    plain arguments without a keyword made without encode_call's checks over a batch."""
    if type(kwds) is dict and not kwds and _plain(args):
        call = (function_bytes, [args], True, kwds)
        return [pickle.dumps(call, protocol=pickle.HIGHEST_PROTOCOL)]
    return encode_call(function_bytes, [args], True, dict(kwds))


# Timing names by function (timing_name): a pool's calls repeat a few functions. Only functions
# without a closure are kept: a kept closure would keep what it captured (an array) alive.
_TIMINGS_KEPT = 256
_timings = {}


def timing_name(function):
    """The name fiber learns the function's run time under (automatic chunk sizes, and how many
    chunks a worker may hold ahead: fiber::timed_as). Every Python call runs one C++ task, so
    without it a quick function's calls made a slow one's look short: after a map of a quick
    function and a broadcast, a map of 4 slow items ran all 4 on one of 4 workers. Its module,
    qualified name and first line: functions of one source line share it (lambdas of one line),
    and a program's count of them is bounded by its source."""
    keep = type(function) in _BY_REFERENCE_TYPES and getattr(function, "__closure__", None) is None
    kept = _timings.get(function) if keep else None
    if kept is not None:
        return kept
    inner = function
    while isinstance(inner, functools.partial):
        inner = inner.func
    code = getattr(inner, "__code__", None)
    qualname = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    name = f"{getattr(inner, '__module__', None)}.{qualname}"
    if code is not None:
        name += f":{code.co_firstlineno}"
    if keep:
        if len(_timings) >= _TIMINGS_KEPT:
            _timings.clear()
        _timings[function] = name
    return name


def master_context():
    """What a worker takes over from the master before it runs the master's functions."""
    return {"sys_path": list(sys.path), "cwd": os.getcwd(), "environ": dict(os.environ)}


def warm_up():
    """In a task process that has just started (a parked worker's standby among them): an
    initializer's work done once on the process's own context, without changing it, so that the
    pages it touches are copied and its caches filled now rather than in the next pool's
    initializer, which a new Pool() waits for (fiber._fiber's task-process start)."""
    context = pickle.loads(pickle.dumps(master_context(), protocol=pickle.HIGHEST_PROTOCOL))
    environ = os.environ
    for name, value in context["environ"].items():
        environ.get(name) != value  # noqa: B015 (the lookups are the point)


def take_master_context(context):
    """In a task process, before the master's functions run: its folder, path and variables."""
    os.chdir(context["cwd"])
    sys.path[:] = context["sys_path"]
    # The master's variables over the worker's own (MPI's settings of the worker process stay);
    # only those that differ, as each set is a putenv (most are the same: the worker was started
    # with the master's environment). Not those the worker's shape set (fiber.Pool(cores=,
    # gpus=)): its devices and thread counts are its own. The worker set them after this
    # interpreter read its environment, so they are read from the C library's.
    own = set(_c_getenv("FIBER_SHAPE_VARIABLES").split(",")) - {""}
    environ = os.environ
    for name, value in context["environ"].items():
        if name not in own and environ.get(name) != value:
            environ[name] = value
    for name in own:
        value = _c_getenv(name)
        if value and environ.get(name) != value:
            environ[name] = value


def _c_getenv(name):
    """A variable of the process's environment as C libraries see it ("" if not set)."""
    value = _libc_getenv()(name.encode())
    return value.decode() if value else ""


@functools.cache
def _libc_getenv():
    """The C library's getenv, looked up once per process (each initializer calls it)."""
    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    return getenv


def encode_initializer(initializer, initargs):
    """A pool's initializer: the master's context, then the user's initializer if any."""
    user_call = None
    if initializer is not None:
        user_call = cloudpickle.dumps(
            (pickled_function(initializer), tuple(initargs), {}), protocol=pickle.HIGHEST_PROTOCOL
        )
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
    """In a task process: the call's function, batch, star and kwargs, from its frames."""
    try:
        function_bytes, batch, star, kwargs = _loaded(call)
        return _function(function_bytes), batch, star, kwargs
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


# A name no module has: looking it up makes the import system's finder (and its listing) of every
# folder of the master's sys.path, as the first call's import of the user's module would.
_NO_MODULE = "_fiber_warm_up_no_such_module"


def _warm_calls():
    """The work of a first call that runs no code of the user's, done now: the finders of the
    master's sys.path and a call of a builtin through run_call, so that the pages they touch are
    copied and the caches filled (a fresh task process's first call of an empty task took about
    twice the page faults without). A parked worker's standby does it ahead, with the context."""
    importlib.machinery.PathFinder.find_spec(_NO_MODULE)
    run_call(encode_call(pickled_function(len), [""]))  # len(""): a call that returns


def run_initializer(initializer):
    """In a task process, before the pool's calls. Raises what the user's initializer raises.
    An initializer that is only the master's context (no user's: a parked worker's standby may
    run it ahead) also does a first call's work that runs no user code (_warm_calls)."""
    context, user_call = pickle.loads(initializer)
    take_master_context(context)
    try:
        if user_call is not None:
            function_bytes, args, kwargs = pickle.loads(user_call)
            _function(function_bytes)(*args, **kwargs)
        else:
            _warm_calls()
    finally:
        flush_output()


def _noting_the_memory_limit(error):
    """A MemoryError in a task process whose memory is limited (fiber.Pool(memory=...), set as
    RLIMIT_DATA: docs/guide/elasticity.md "Worker shapes") says the limit: the task ran out of
    its worker's share, not of the node's memory."""
    if not isinstance(error, MemoryError):
        return
    limit, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if limit != resource.RLIM_INFINITY:
        error.add_note(
            f"fiber: this task process may use at most {limit:,} bytes of data memory "
            "(the pool's or the Process's memory=, as RLIMIT_DATA)"
        )


def _pickled_exception(error):
    _noting_the_memory_limit(error)
    text = "".join(traceback.format_exception(error))
    try:
        return cloudpickle.dumps((error, text), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as unpicklable:  # the exception cannot travel: multiprocessing's error says so
        stand_in = MaybeEncodingError(unpicklable, error)
        return cloudpickle.dumps((stand_in, text), protocol=pickle.HIGHEST_PROTOCOL)


def _returned(values):
    """The outcome of a batch that returned; values that cannot be pickled fail the batch (an
    apply's, a chunk's) with multiprocessing's MaybeEncodingError (what they were, and why they
    cannot travel)."""
    try:
        if _plain(values):
            return [_RETURNED + pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)]
        data, *buffers = _frames(values)
        return [_RETURNED + data, *buffers]
    except Exception as unpicklable:
        value = values[0] if len(values) == 1 else values
        return [_RAISED + _pickled_exception(MaybeEncodingError(unpicklable, value))]


def run_call(call):
    """In a task process: the call's outcome, from the call's frames to the outcome's. Only an
    exception outside Exception (SystemExit, KeyboardInterrupt) leaves it, and fiber reports it
    as the task's error."""
    try:
        function, batch, star, kwargs = _unpickled(call)
        del call  # the arguments' buffers live as long as the arguments, no longer
        # Without kwargs, map and starmap as multiprocessing's workers call them: an empty
        # **kwargs costs a dict per call, as long as an empty task's call itself.
        if star:
            values = (
                [function(*args, **kwargs) for args in batch]
                if kwargs
                else list(itertools.starmap(function, batch))
            )
        else:
            values = (
                [function(item, **kwargs) for item in batch]
                if kwargs
                else list(map(function, batch))
            )
        return _returned(values)
    except Exception as error:
        return [_RAISED + _pickled_exception(error)]
    finally:
        flush_output()


def raised(outcome):
    return outcome[0][0] == _RAISED_BYTE


def value_of(outcome):
    """The batch's values, or raises its exception with the remote traceback as its __cause__."""
    if not raised(outcome):
        return _loaded(outcome, skip=len(_RETURNED))
    error, text = _loaded(outcome, skip=len(_RAISED))
    error.__cause__ = RemoteTraceback(f'\n"""\n{text}"""')
    raise error


def exception_of(outcome):
    """The exception a raised outcome carries, with its remote traceback, not raised."""
    try:
        value_of(outcome)
    except Exception as error:
        return error
    return None
