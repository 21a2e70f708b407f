#!/usr/bin/python3
"""The framework overhead test (benchmarks/overhead/protocol.py) on mpi4py.futures: an
MPIPoolExecutor of 5 workers that it spawns (MPI_Comm_spawn), with the MPI settings fiber uses.

    /usr/bin/python3 overhead.py [--total S] [--task-seconds S...] [--modes ...] [--repeats N]

Run it directly (an MPI singleton, as fiber's programs run), not under mpirun.
"""

import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), os.path.join(here, "..", "..")]
import peers  # noqa: E402
import protocol  # noqa: E402

peers.set_fiber_mpi_defaults(os.path.join(here, ".."))
from mpi4py.futures import MPIPoolExecutor  # noqa: E402


def main():
    args = protocol.parse_args(__doc__.splitlines()[0])
    with MPIPoolExecutor(max_workers=protocol.WORKERS) as executor:
        def apply_round(seconds):
            pending = [executor.submit(time.sleep, seconds) for _ in range(protocol.WORKERS)]
            for future in pending:
                future.result()

        def batch_map(seconds, tasks):
            list(executor.map(time.sleep, [seconds] * tasks))

        protocol.run("mpi4py.futures", args, apply_round, batch_map)


if __name__ == "__main__":
    main()
