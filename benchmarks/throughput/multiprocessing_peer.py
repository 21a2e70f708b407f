#!/usr/bin/python3
"""The peer for fiber_throughput: its measurements (protocol.py) on Python's multiprocessing.Pool.

    /usr/bin/python3 multiprocessing_peer.py [--quick] [--tasks N]
"""

import multiprocessing
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol  # noqa: E402

# Tasks per measurement (map at chunksize 1, at automatic chunks, apply_async), chosen so that
# each takes roughly 0.3-2 s here.
SIZES = (50_000, 2_000_000, 5_000)
QUICK_SIZES = (5_000, 200_000, 500)


def main():
    sizes = protocol.parse_args(__doc__.splitlines()[0], SIZES, QUICK_SIZES)
    for workers in protocol.WORKER_COUNTS:
        with multiprocessing.Pool(workers) as pool:
            def apply_round(arguments):
                pending = [pool.apply_async(protocol.empty, (x,)) for x in arguments]
                return [result.get() for result in pending]

            protocol.measure("multiprocessing", workers, sizes,
                             lambda items, chunksize: pool.map(protocol.empty, items, chunksize),
                             apply_round)


if __name__ == "__main__":
    main()
