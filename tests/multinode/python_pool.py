"""A Python pool on the simulated nodes (tests/multinode/run.sh): a pool of one worker per slot of
the hostfile less the master's spreads over every node, and a map runs on all of them. Prints one
line; exits 1 with the reason when the spread is not what the hostfile says.

The pool's size is given: Pool() would ask for 7 workers here, as MPI_UNIVERSE_SIZE counts the
slots of the machine mpirun runs on too (8), which is not in the hostfile (docs/platform.md,
"Slots and oversubscription")."""

import os
import sys
import time

import fiber

# Long enough for every worker to take items while the others run theirs.
ITEM_SECONDS = 0.05
ITEMS = 60
NODES = {"nodeA", "nodeB", "nodeC"}
SLOTS = 6  # tests/multinode/hostfile: 2 on each node


def where(_):
    time.sleep(ITEM_SECONDS)
    return os.uname().nodename, os.getppid()  # the task process's worker


with fiber.Pool(SLOTS - 1) as pool:
    ran = pool.map(where, range(ITEMS), chunksize=1)
hosts = {host for host, _ in ran}
workers = {(host, worker) for host, worker in ran}
print(f"python pool: {len(workers)} workers on {', '.join(sorted(hosts))}")
if hosts != NODES or len(workers) != SLOTS - 1:
    sys.exit(f"python_pool.py: expected {SLOTS - 1} workers on {sorted(NODES)}")
