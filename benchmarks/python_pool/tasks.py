"""The tasks every framework of the Python pool benchmark runs, in a module of their own: each
peer's workers import them by name (mpi4py.futures, IPyParallel and Dask pickle a module's
functions by reference), so that every framework sends the same small reference."""


def empty(x):
    """The empty task of the throughput measurements: its argument back."""
    return x


def same_array(array):
    """The large-data task: the array back, so that it crosses as an argument and as a result."""
    return array
