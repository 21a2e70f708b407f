"""fiber.NodeArray: a large read-only numpy array with one copy per node, shared by every process
of the job there (the master, its workers, their task processes), as fiber::NodeArray in C++:
e.g. the noise table of Evolution Strategies.

    table = fiber.NodeArray(np.random.default_rng(0).standard_normal(10**8, dtype=np.float32))
    pool.map(lambda i: float(table[i : i + 1000].sum()), range(0, 10**6, 1000))

The copy is POSIX shared memory (/dev/shm) that fiber's runtime names after the run, the node
and the array's name, and removes when the last process on the node that mapped it is gone.
A process's view is numpy.frombuffer over the mapping: no copy, read-only (`flags.writeable` is
False, and a write raises ValueError). Pickled (an argument, a closure's capture), a NodeArray is
its name, shape, dtype and fill function, never its data: a process that unpickles it maps the
node's copy, once per process.
"""

import itertools
import math
import pickle

import numpy as np

from fiber import _calls, _fiber, _runtime
from fiber.exceptions import FiberError

# Names given to arrays made without one: one series per master.
_unnamed = itertools.count()
# The arrays this process has mapped, by name: each is mapped once and kept for the process's
# life (as C++ keeps its descriptor and lock), so unpickling it again costs no system call.
_mapped = {}


def _no_fill(name):
    def fill(_):
        raise FiberError(
            f"NodeArray '{name}' was made from the master's array and has no copy on this node: "
            "make it with shape, dtype and fill to use it on other nodes"
        )

    return fill


class NodeArray:
    """NodeArray(array) copies a numpy array into the node's copy; NodeArray(shape=..., dtype=...,
    fill=f) has f(writable_array) fill it, in whichever process is first on a node (it must give
    the same values everywhere). `array` is the read-only numpy array; indexing, len() and
    numpy functions (`np.asarray(node_array)`) use it."""

    def __init__(self, array=None, *, shape=None, dtype=None, fill=None, name=None):
        if (array is None) == (fill is None):
            raise TypeError("NodeArray needs an array, or shape, dtype and fill (not both)")
        if array is not None:
            if shape is not None or dtype is not None:
                raise TypeError("NodeArray(array) takes its shape and dtype from the array")
            source = np.ascontiguousarray(array)
            shape, dtype = source.shape, source.dtype
        elif shape is None or dtype is None or not callable(fill):
            raise TypeError("NodeArray(shape=..., dtype=..., fill=...) needs all three")
        dtype = np.dtype(dtype)
        if dtype.hasobject:
            raise TypeError("a NodeArray holds plain values, not Python objects")
        shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
        if any(n < 0 for n in shape):
            raise ValueError(f"NodeArray's shape {shape} has a negative size")
        if math.prod(shape) == 0:
            raise ValueError("a NodeArray needs at least one element")
        if name is None:
            name = f"python-{next(_unnamed)}"
        if name in _mapped:
            raise ValueError(f"a NodeArray named '{name}' exists already in this program")
        self._name, self._shape, self._dtype = name, shape, dtype
        self._fill = None if fill is None else _calls.pickled_function(fill)
        _runtime.start()
        if array is not None:
            self._map(lambda view: np.copyto(view, source, casting="no"))
        else:
            self._map(fill)

    def _map(self, fill):
        def fill_segment(memory):
            fill(np.frombuffer(memory, dtype=self._dtype).reshape(self._shape))

        nbytes = math.prod(self._shape) * self._dtype.itemsize
        segment = _fiber.open_segment(self._name, nbytes, fill_segment)
        self._array = np.frombuffer(segment, dtype=self._dtype).reshape(self._shape)
        _mapped[self._name] = self

    @property
    def array(self):
        """The node's copy as a read-only numpy array (zero-copy)."""
        return self._array

    @property
    def name(self):
        """The name that identifies the array on every node (what a pickle carries)."""
        return self._name

    @property
    def shape(self):
        """The array's shape."""
        return self._shape

    @property
    def dtype(self):
        """The array's numpy dtype."""
        return self._dtype

    def __len__(self):
        return len(self._array)

    def __getitem__(self, index):
        return self._array[index]

    def __array__(self, dtype=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self):
        return f"NodeArray(name={self._name!r}, shape={self._shape}, dtype={self._dtype})"

    def __reduce__(self):
        return _opened, (self._name, self._shape, self._dtype.str, self._fill)


def _opened(name, shape, dtype, fill):
    """What an unpickled NodeArray is: this process's mapping of the node's copy."""
    mapped = _mapped.get(name)
    if mapped is not None:
        return mapped
    opened = NodeArray.__new__(NodeArray)
    opened._name, opened._shape, opened._dtype, opened._fill = name, shape, np.dtype(dtype), fill
    opened._map(_no_fill(name) if fill is None else pickle.loads(fill))
    return opened
