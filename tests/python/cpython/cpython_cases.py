"""CPython's own Pool tests (test._test_multiprocessing), made into test classes that run on fiber.

CPython runs each of its `_Test...` classes once per kind of multiprocessing by mixing it with a
mixin that names that kind's Pool, Process, Queue... (ProcessesMixin, ThreadsMixin, ManagerMixin;
install_tests_in_module_dict). FiberMixin is one more such mixin, so that the cases' own bodies,
imported and never copied, say what fiber must do. A case that cannot apply to pools on a
cluster is in NOT_APPLICABLE with its reason and runs as a skip that gives it; a case whose
example means something else on fiber runs with a stand-in for it (STAND_INS).

    python3 cpython_cases.py     prints both as docs/python-cpython-cases.md's table
"""

import multiprocessing
import threading
import types
import unittest

import test._test_multiprocessing as cpython

import fiber

# The classes run on fiber: every Pool case of CPython's suite.
PORTED_CLASSES = ("_TestPool", "_TestPoolWorkerErrors", "_TestPoolWorkerLifetime")

# "class.case" -> why it cannot apply to fiber's pools.
NOT_APPLICABLE = {
    "_TestPool.test_make_pool": "after its two ValueErrors (which run in test_bad_input.py), it "
    "counts `len(pool._pool)`, multiprocessing's list of Process objects: fiber's workers are "
    "MPI processes that the runtime owns and may place on other nodes",
    "_TestPoolWorkerLifetime.test_pool_worker_lifetime": "reads the pids of `pool._pool`'s "
    "Process objects and calls `pool._repopulate_pool()`, multiprocessing's internals; fiber "
    "replaces a worker's task process, not the worker (test_pool_arguments.py checks that "
    "maxtasksperchild gives new task processes)",
    "_TestPoolWorkerLifetime.test_worker_finalization_via_atexit_handler_of_multiprocessing": "its "
    "program is a text that imports multiprocessing's Pool itself, not the class's; "
    "test_programs.py runs such a program on fiber (a pool never closed, ended at exit)",
}


def unpicklable_result():
    """A result that cannot travel back: a lock (fiber returns lambdas, which cloudpickle sends by
    value, so CPython's `lambda: 42` is a result that travels)."""
    return threading.Lock()


# What a case's module-level name stands for when it runs on fiber, where CPython's example would
# not test what the case means: "class.case" -> (name, stand-in, why).
STAND_INS = {
    "_TestPoolWorkerErrors.test_unpickleable_result": (
        "unpickleable_result",
        unpicklable_result,
        "returns a lock, not a lambda: fiber sends lambdas back by value (cloudpickle)",
    ),
}


class FiberMixin(cpython.BaseMixin):
    """fiber's names for the cases, as ProcessesMixin gives multiprocessing's."""

    # fiber's pools are pools of processes: the cases check this to run their process parts.
    TYPE = "processes"
    Pool = staticmethod(fiber.Pool)


def _fiber_as_multiprocessing():
    """multiprocessing's namespace with fiber's Pool: what a case that calls
    `multiprocessing.Pool(...)` itself, rather than `self.Pool`, sees as `multiprocessing`."""
    namespace = types.ModuleType(multiprocessing.__name__)
    namespace.__dict__.update(vars(multiprocessing))
    namespace.Pool = fiber.Pool
    return namespace


def _on_fiber(function, names):
    """`function` (a case's body, its code unchanged) looking its globals up in `names`."""
    rebound = types.FunctionType(
        function.__code__, names, function.__name__, function.__defaults__, function.__closure__
    )
    rebound.__kwdefaults__ = function.__kwdefaults__
    rebound.__qualname__ = function.__qualname__
    return rebound


def _case_names(base):
    return [name for name in vars(base) if name.startswith("test_")]


def _fiber_class(base, module_name):
    """`base` mixed with FiberMixin, as install_tests_in_module_dict mixes ProcessesMixin."""
    fiber_names = {**vars(cpython), "multiprocessing": _fiber_as_multiprocessing()}
    members = {}
    for name, member in vars(base).items():
        stand_in = STAND_INS.get(f"{base.__name__}.{name}")
        names = fiber_names if stand_in is None else {**fiber_names, stand_in[0]: stand_in[1]}
        function = getattr(member, "__func__", member)
        code = getattr(function, "__code__", None)
        if code is None or ("multiprocessing" not in code.co_names and stand_in is None):
            continue
        rebound = _on_fiber(function, names)
        members[name] = classmethod(rebound) if isinstance(member, classmethod) else rebound
    for name in _case_names(base):
        reason = NOT_APPLICABLE.get(f"{base.__name__}.{name}")
        if reason is not None:
            members[name] = unittest.skip(reason)(getattr(base, name))
    made = type("WithFiber" + base.__name__[1:], (base, FiberMixin, unittest.TestCase), members)
    made.__module__ = module_name
    return made


def install_cases(module_globals):
    """Puts the ported classes into a test module, named as CPython names its own
    (WithFiberTestPool, ...). Their module must be importable by name in the workers, like any
    user's module, since a case may send one of their methods (`self._test_traceback`)."""
    known = {
        f"{name}.{case}" for name in PORTED_CLASSES for case in _case_names(getattr(cpython, name))
    }
    unknown = (set(NOT_APPLICABLE) | set(STAND_INS)) - known
    if unknown:
        raise LookupError(f"no such case in CPython's suite: {sorted(unknown)}")
    for name in PORTED_CLASSES:
        made = _fiber_class(getattr(cpython, name), module_globals["__name__"])
        module_globals[made.__name__] = made


def markdown_table():
    """NOT_APPLICABLE and STAND_INS as the rows of docs/python-cpython-cases.md."""
    rows = ["| case | on fiber |", "|---|---|"]
    for case, reason in sorted(NOT_APPLICABLE.items()):
        rows.append(f"| `{case}` | skipped: {reason} |")
    for case, (_, _, why) in sorted(STAND_INS.items()):
        rows.append(f"| `{case}` | runs; its example {why} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
