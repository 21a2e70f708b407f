#!/usr/bin/python3
"""The ES generation of es_real.py on a Python peer, on this machine (one node): per generation,
1,024 tasks, each given the policy's parameters (353 doubles, as fiber-es's pendulum policy) and a
noise index, sleeping what a task of es_real.py sleeps (the paper's 0.92 s) and returning two
returns; the peer's own map, a task per worker at a time. IPyParallel: a local cluster of
WORKERS engines and its LoadBalancedView; mpi4py.futures: an MPIPoolExecutor of WORKERS workers
(spawned, with the MPI settings fiber uses). Rows in es_real.py's CSV format (kind: the
framework; the columns a peer has no figure for empty), one per generation; in the last, the PSS
of all the peer's processes (its workers, and its controller or MPI daemon).

    /usr/bin/python3 peer.py --framework ipyparallel|mpi4py.futures [--workers 32 64 ...]
        [--generations G]

Run it directly (an MPI singleton, as fiber's programs run), not under mpirun.
"""

import argparse
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, "..")]
import es_paper  # noqa: E402
import es_real  # noqa: E402
import peers  # noqa: E402
import proc_cpu  # noqa: E402
from proc_memory import pss_bytes  # noqa: E402

PARAMETERS = 353  # fiber-es's Pendulum-v1 policy, hidden 16 16
SLEEP_SECONDS = es_real.STEP_SLEEP_US * 1e-6 * es_real.STEPS_PER_TASK
ENGINE_START_SECONDS = 5  # the cluster's start limit per engine (2 shared cores)


def task(theta, index, seconds):
    """A task of es_real.py's generation, its episodes slept: two returns. Self-contained, as
    IPyParallel runs a function of __main__ among its engine's globals, not this module's."""
    import time

    time.sleep(seconds)
    return float(theta[index % len(theta)]), -float(theta[index % len(theta)])


def descendants_pss():
    """The PSS in bytes of every process under this one (the peer's workers, and its controller
    or MPI daemon)."""
    tree = proc_cpu.children_by_parent()
    total, pending = 0, [os.getpid()]
    while pending:
        for child, _ in tree.get(pending.pop(), []):
            total += pss_bytes(child) or 0
            pending.append(child)
    return total


def generations(framework, workers, count, started, run_map):
    """Runs `count` generations through run_map(function, thetas, indices, seconds) and prints a
    row each."""
    row = dict.fromkeys(es_real.HEADER.split(","), "")
    row.update(kind=framework, workers=workers, nodes=1,
               start_seconds=f"{time.monotonic() - started:.3f}",
               step_sleep_us=es_real.STEP_SLEEP_US, cores=os.cpu_count())
    theta = [0.0] * PARAMETERS
    for g in range(count):
        begun = time.monotonic()
        results = run_map(task, [theta] * es_paper.TASKS, range(es_paper.TASKS),
                          [SLEEP_SECONDS] * es_paper.TASKS)
        row.update(generation=g, wall_seconds=f"{time.monotonic() - begun:.3f}",
                   tasks=len(results))
        if g == count - 1:  # after the timed generations: what the peer's processes hold
            row.update(pss_processes=workers, pss_worker_bytes=descendants_pss(),
                       pss_task_bytes=0)
        print(",".join(str(value) for value in row.values()), flush=True)
        print(f"es_real peer: {framework}, {workers} workers: generation {g} "
              f"{row['wall_seconds']} s", file=sys.stderr, flush=True)
        theta = [value + 1e-3 for value in theta]  # the next generation's policy


def run_ipyparallel(workers, count):
    started = time.monotonic()
    with peers.ipyparallel_cluster(workers, start_timeout=ENGINE_START_SECONDS * workers) as client:
        view = client.load_balanced_view()
        generations("ipyparallel", workers, count, started,
                    lambda f, *arguments: view.map_sync(f, *arguments))


def run_mpi4py(workers, count):
    peers.set_fiber_mpi_defaults(here)
    from mpi4py.futures import MPIPoolExecutor

    started = time.monotonic()
    with MPIPoolExecutor(max_workers=workers) as executor:
        # The pool's workers start at its first task: one round through each first.
        list(executor.map(time.sleep, [0] * workers))
        generations("mpi4py.futures", workers, count, started,
                    lambda f, *arguments: list(executor.map(f, *arguments)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=("ipyparallel", "mpi4py.futures"))
    parser.add_argument("--workers", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--generations", type=int, default=3)
    args = parser.parse_args()
    if min(args.workers) <= 0 or args.generations < 2:
        parser.error("workers: positive; --generations: at least 2 (the first is a warm-up)")
    for workers in args.workers:
        if args.framework == "ipyparallel":
            run_ipyparallel(workers, args.generations)
        else:
            run_mpi4py(workers, args.generations)


if __name__ == "__main__":
    main()
