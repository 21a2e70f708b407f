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

from fiber import _calls


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
