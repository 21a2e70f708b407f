#!/usr/bin/python3
"""The framework overhead test (benchmarks/overhead/protocol.py) on IPyParallel: a local cluster
of 5 engines, started and stopped by this script, and its LoadBalancedView.

    /usr/bin/python3 overhead.py [--total S] [--task-seconds S...] [--modes ...] [--repeats N]
"""

import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), os.path.join(here, "..", "..")]
import peers  # noqa: E402
import protocol  # noqa: E402


def main():
    args = protocol.parse_args(__doc__.splitlines()[0])
    with peers.ipyparallel_cluster(protocol.WORKERS) as client:
        view = client.load_balanced_view()

        def apply_round(seconds):
            pending = [view.apply_async(time.sleep, seconds) for _ in range(protocol.WORKERS)]
            for result in pending:
                result.get()

        def batch_map(seconds, tasks):
            view.map_sync(time.sleep, [seconds] * tasks)

        protocol.run("ipyparallel", args, apply_round, batch_map)


if __name__ == "__main__":
    main()
