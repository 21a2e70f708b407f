#!/usr/bin/python3
"""The peer for fiber_throughput: its measurements (protocol.py) on mpi4py.futures'
MPIPoolExecutor, whose workers it spawns (MPI_Comm_spawn) with the MPI settings fiber uses.

    /usr/bin/python3 mpi4py_futures_peer.py [--quick] [--tasks N]

Run it directly (an MPI singleton, as fiber's programs run), not under mpirun.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..")]
import peers  # noqa: E402
import protocol  # noqa: E402

peers.set_fiber_mpi_defaults(here)
from mpi4py.futures import MPIPoolExecutor  # noqa: E402

SIZES = (20_000, 400_000, 5_000)
QUICK_SIZES = (2_000, 40_000, 500)


def main():
    sizes = protocol.parse_args(__doc__.splitlines()[0], SIZES, QUICK_SIZES)
    for workers in protocol.WORKER_COUNTS:
        with MPIPoolExecutor(max_workers=workers) as executor:
            def pool_map(items, chunksize):
                chunksize = chunksize or protocol.automatic_chunksize(len(items), workers)
                return list(executor.map(protocol.empty, items, chunksize=chunksize))

            def apply_round(arguments):
                pending = [executor.submit(protocol.empty, x) for x in arguments]
                return [future.result() for future in pending]

            protocol.measure("mpi4py.futures", workers, sizes, pool_map, apply_round)


if __name__ == "__main__":
    main()
