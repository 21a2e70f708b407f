"""A pool's worker shape from Python's arguments (fiber::WorkerShape): cores, memory and GPUs per
worker, checked here so that a bad value is one TypeError or ValueError at the call."""

import math
import numbers
import re

# Units of a memory string, in bytes: decimal (kB, MB, ...) and binary (KiB, MiB, ...), as
# Kubernetes and Dask read them; a bare number is bytes.
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_MEMORY = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")


def memory_bytes(value):
    """`value` in bytes: an int of bytes, or a string such as "8GiB", "512 MiB", "1.5GB"; None or 0:
    no limit (0). TypeError for another type, ValueError for a negative number or a string that
    does not parse."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
        raise TypeError(f"memory must be an int of bytes or a string like '8GiB', not {value!r}")
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError(f"memory must be >= 0 bytes, not {value}")
        return int(value)
    match = _MEMORY.fullmatch(value)
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(
            f"memory {value!r} does not parse: a number and one of B, kB, MB, GB, TB, KiB, MiB, "
            "GiB, TiB"
        )
    amount = float(match.group(1)) * _UNITS[unit]
    if not math.isfinite(amount) or amount >= 2**64:
        raise ValueError(f"memory {value!r} is too large")
    return int(amount)


def worker_shape(cores, memory, gpus):
    """The arguments of a worker shape for the C++ pool or Process: cores and gpus ints (not bools)
    of at least 0 (TypeError, ValueError), memory as memory_bytes reads it."""
    return {
        "cores": _count("cores", cores),
        "gpus": _count("gpus", gpus),
        "memory_bytes": memory_bytes(memory),
    }


def _count(name, value):
    """A count of at least 0: an int, not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {value}")
    return int(value)
