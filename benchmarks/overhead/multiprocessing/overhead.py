#!/usr/bin/python3
"""The framework overhead test (benchmarks/overhead/protocol.py) on Python's multiprocessing.Pool
of 5 processes (fork).

    /usr/bin/python3 overhead.py [--total S] [--task-seconds S...] [--modes ...] [--repeats N]
"""

import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import protocol  # noqa: E402


def main():
    args = protocol.parse_args(__doc__.splitlines()[0])
    with multiprocessing.Pool(protocol.WORKERS) as pool:
        def apply_round(seconds):
            pending = [pool.apply_async(time.sleep, (seconds,)) for _ in range(protocol.WORKERS)]
            for result in pending:
                result.get()

        def batch_map(seconds, tasks):
            pool.map(time.sleep, [seconds] * tasks)

        protocol.run("multiprocessing", args, apply_round, batch_map)


if __name__ == "__main__":
    main()
