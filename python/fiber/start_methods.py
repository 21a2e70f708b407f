"""multiprocessing's start methods, accepted and ignored: fiber has one way to start a process.

A worker is a fresh interpreter that MPI spawns (the spawn method's model: nothing of the
master's memory but what is pickled to it), whose task processes are forked from it in C++.
Programs written for multiprocessing often call set_start_method("spawn") or get_context(...)
once; refusing them would break such programs for nothing, so the known methods are accepted,
an unknown one is the ValueError multiprocessing raises, and a context is the module fiber
itself (it has the names a context has: Process, Queue, Pipe, Pool ...).
"""

import sys

_METHODS = ("fork", "spawn", "forkserver")
# What fiber's processes are closest to.
_METHOD = "spawn"


def _check(method):
    if method is not None and method not in _METHODS:
        raise ValueError(f"cannot find context for {method!r}")


def set_start_method(method, force=False):
    """Accepted and ignored (fiber has one way to start a process); ValueError for an unknown
    method, as multiprocessing."""
    _check(method)


def get_start_method(allow_none=False):
    """"spawn": what fiber's workers are closest to (fresh interpreters)."""
    return _METHOD


def get_all_start_methods():
    """multiprocessing's method names, all accepted."""
    return list(_METHODS)


def get_context(method=None):
    """The module fiber itself, which has a context's names (Process, Queue, Pipe, Pool, ...);
    ValueError for an unknown method."""
    _check(method)
    return sys.modules["fiber"]
