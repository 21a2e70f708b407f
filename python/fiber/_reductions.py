"""pool.map_reduce(f, items, op): the bytes of a reduction's items and partial results.

The C++ reduction (fiber::Pool::map_reduce) folds partial results with a registered task
R op(R, R) wherever the tree puts the fold: in the task process that ran a chunk, in a task
process of the node for the node's chunks, in the master for the nodes' values. Its R here is
bytes: the pickled operation and an outcome (fiber/_calls.py), so that any process that folds
finds the Python `op` in what it folds. An outcome that raised stays the fold's value, so the
first failed item (in the fold's order, that of the items) is what the master raises; so is an
exception of `op` itself.
"""

import pickle
import struct

from fiber import _calls

# A partial result: the operation's size, the pickled operation, then the outcome.
_OPERATION_SIZE = struct.Struct("<Q")


def _partial(operation, outcome):
    return _OPERATION_SIZE.pack(len(operation)) + operation + outcome


def _parts(partial):
    (size,) = _OPERATION_SIZE.unpack_from(partial)
    start = _OPERATION_SIZE.size
    return partial[start : start + size], partial[start + size :]


def encode_item(operation, call):
    """A map_reduce item: the pickled operation and the call of f on the item."""
    return pickle.dumps((operation, call), protocol=pickle.HIGHEST_PROTOCOL)


def run_item(item):
    """In a task process: the item's partial result (f's outcome, raised or not)."""
    operation, call = pickle.loads(item)
    return _partial(operation, _calls.run_call(call))


def combine(left, right):
    """op(left's value, right's value) as a partial result; a raised outcome wins, left first."""
    operation, left_outcome = _parts(left)
    _, right_outcome = _parts(right)
    for outcome in (left_outcome, right_outcome):
        if _calls.raised(outcome):
            return _partial(operation, outcome)
    values = (_calls.value_of(left_outcome), _calls.value_of(right_outcome))
    return _partial(operation, _calls.run_call(_calls.encode_call(operation, values, {})))


def value_of(partial):
    """The reduction's value, or raises the first failed item's (or op's) exception."""
    return _calls.value_of(_parts(partial)[1])
