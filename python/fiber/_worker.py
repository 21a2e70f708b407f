"""A worker of fiber's runtime: what a master's Pool spawns (sys.executable running this file).

It is started as a script rather than with -m, so that it finds its package wherever the master
found it, whatever the worker's environment says: its folder on sys.path (which would shadow
standard modules with the package's own) is replaced by the package's parent. It then serves
tasks until the master's runtime ends; the pool's initializer gives each task process the
master's sys.path, working directory and environment (fiber/_calls.py).
"""

import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from fiber import _fiber, _runtime  # noqa: E402 (needs the path above)

_runtime.mark_worker()
_fiber.serve_as_worker(sys.argv)
