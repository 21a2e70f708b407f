"""Notes that a pickling error gets on its way to the user: which object could not travel, and why.

Pickle's own messages name a type ("cannot pickle '_thread.lock' object") but not which of a
call's arguments, or which variable of a closure, holds it; and a worker that cannot unpickle a
call says only what failed there, not that it is a module the workers import by name. The error
keeps its type and message (multiprocessing's, so `except` clauses still match) and gets a note
(PEP 678), which its traceback shows.
"""

import pickle
import reprlib
import socket

import cloudpickle

# How much of an object's repr a note shows: enough for "<unlocked _thread.lock object at 0x...>".
_REPR_CHARACTERS = 80
_repr = reprlib.Repr()
_repr.maxother = _repr.maxstring = _REPR_CHARACTERS


def _first_unpicklable(parts):
    """The first of `parts` ((description, object) pairs) that cannot be pickled, described."""
    for description, part in parts:
        try:
            cloudpickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return f"{description}, {_repr.repr(part)}"
    return None


def _function_parts(function):
    """What cloudpickle sends with a function by value: its defaults, its closure's variables and
    the globals it uses."""
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    positional = code.co_varnames[: code.co_argcount]
    defaults = function.__defaults__ or ()
    parts = [
        (f"its default for {name!r}", value)
        for name, value in zip(positional[len(positional) - len(defaults) :], defaults)
    ]
    parts += [
        (f"its default for {name!r}", value)
        for name, value in (function.__kwdefaults__ or {}).items()
    ]
    for name, cell in zip(code.co_freevars, function.__closure__ or ()):
        try:
            parts.append((f"its closure's variable {name!r}", cell.cell_contents))
        except ValueError:  # a variable not yet assigned: nothing to send
            pass
    names = function.__globals__
    used = [name for name in code.co_names if name in names]
    parts += [(f"the global {name!r} it uses", names[name]) for name in used]
    return parts


def note_function(error, function):
    """`error` was raised pickling a pool's function (or initializer) in the master."""
    name = getattr(function, "__qualname__", None) or _repr.repr(function)
    part = _first_unpicklable(_function_parts(function))
    why = f"{part}, cannot be pickled" if part else "it cannot be pickled"
    error.add_note(f"fiber: the function {name} cannot go to the workers: {why}")


def note_arguments(error, args, kwargs):
    """`error` was raised pickling a call's arguments in the master."""
    parts = [(f"argument {index}", value) for index, value in enumerate(args)]
    parts += [(f"keyword argument {key!r}", value) for key, value in kwargs.items()]
    part = _first_unpicklable(parts)
    what = f"its {part}," if part else "its arguments"
    error.add_note(f"fiber: a call cannot go to the workers: {what} cannot be pickled")


def _module_imported(error):
    """The module whose import raised `error` while a call was unpickled, if one did."""
    if isinstance(error, ImportError) and error.name:
        return error.name
    module = None
    trace = error.__traceback__
    while trace is not None:  # the innermost module body run: the one that raised
        if trace.tb_frame.f_code.co_name == "<module>":
            module = trace.tb_frame.f_globals.get("__name__")
        trace = trace.tb_next
    return module


def note_unpickling(error):
    """`error` was raised unpickling a call in a task process."""
    where = f"a task process on {socket.gethostname()}"
    module = _module_imported(error)
    if module is None:
        error.add_note(f"fiber: {where} could not unpickle the call's function or arguments")
        return
    error.add_note(
        f"fiber: {where} could not import module {module!r} to unpickle the call: a module's "
        "functions and classes go by reference, and the workers import their module through the "
        "master's sys.path of when the pool started"
    )
