"""multiprocessing's names that cannot work across the nodes of a cluster, each one clear error.

multiprocessing's locks, events, shared values and managers rely on memory or a server shared by
the processes of one machine; fiber's processes may run on other nodes, so each name here raises
fiber.NotSupportedOnCluster (a NotImplementedError) saying why and what to use instead, rather
than an AttributeError or a primitive that silently fails to synchronize anything.
"""

from fiber.exceptions import NotSupportedOnCluster

_WHY = "fiber's processes may run on other nodes, where no memory or lock is shared"
_SEND = "send the data through a fiber.Queue or a fiber.Pipe"
_ORDER = "order the processes with messages: a fiber.Queue, a fiber.Pipe, or Process.join()"

# name: (what multiprocessing's needs, what to use instead)
_REFUSED = {
    "Manager": ("a server process that every process connects to", _SEND),
    "Lock": ("a semaphore in shared memory", _ORDER),
    "RLock": ("a semaphore in shared memory", _ORDER),
    "Semaphore": ("a semaphore in shared memory", _ORDER),
    "BoundedSemaphore": ("a semaphore in shared memory", _ORDER),
    "Condition": ("a lock in shared memory", _ORDER),
    "Event": ("a lock in shared memory", _ORDER + " (a message that says it happened)"),
    "Barrier": ("a lock in shared memory", _ORDER + " (each party gets and puts a token)"),
    "Value": (
        "shared memory",
        _SEND + "; for large read-only data shared by a node's processes, fiber's NodeArray",
    ),
    "Array": (
        "shared memory",
        _SEND + "; for large read-only data shared by a node's processes, fiber's NodeArray",
    ),
    "RawValue": ("shared memory", _SEND),
    "RawArray": ("shared memory", _SEND),
}


def _refusing(name, needs, instead):
    def refuse(*args, **kwargs):
        raise NotSupportedOnCluster(
            f"fiber.{name}: multiprocessing's needs {needs}; {_WHY}: {instead}"
        )

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"Not on a cluster (multiprocessing's needs {needs}): {instead}."
    return refuse


for _name, (_needs, _instead) in _REFUSED.items():
    globals()[_name] = _refusing(_name, _needs, _instead)

__all__ = sorted(_REFUSED)
