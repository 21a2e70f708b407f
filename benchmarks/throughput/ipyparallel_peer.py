#!/usr/bin/python3
"""The peer for fiber_throughput: its measurements (protocol.py) on IPyParallel's
LoadBalancedView, over a local cluster of 4 engines that it starts and stops (the view for
1 or 2 workers is restricted to that many engines).

    /usr/bin/python3 ipyparallel_peer.py [--quick] [--tasks N]
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..")]
import peers  # noqa: E402
import protocol  # noqa: E402

SIZES = (500, 20_000, 200)
QUICK_SIZES = (100, 2_000, 40)


def empty(x):
    """The task, defined here: the engines get __main__'s functions by value, not by import."""
    return x


def main():
    sizes = protocol.parse_args(__doc__.splitlines()[0], SIZES, QUICK_SIZES)
    with peers.ipyparallel_cluster(max(protocol.WORKER_COUNTS)) as client:
        for workers in protocol.WORKER_COUNTS:
            view = client.load_balanced_view(targets=client.ids[:workers])

            def pool_map(items, chunksize, view=view, workers=workers):
                chunksize = chunksize or protocol.automatic_chunksize(len(items), workers)
                return view.map_sync(empty, items, chunksize=chunksize)

            def apply_round(arguments, view=view):
                pending = [view.apply_async(empty, x) for x in arguments]
                return [result.get() for result in pending]

            protocol.measure("ipyparallel", workers, sizes, pool_map, apply_round)


if __name__ == "__main__":
    main()
