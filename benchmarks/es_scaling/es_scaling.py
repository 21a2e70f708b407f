#!/usr/bin/python3
"""ES scaling: generation time of fiber-es with 1, 2, 4, ... 64 workers at the paper's population
of 2,048, on Pendulum-v1 (every episode 200 steps) with a simulated cost per step
(--step-sleep-us, slept at the end of each episode), so that sleeping workers, not the 2 cores of
this machine, set the pace. One task is one antithetic pair (2 episodes): 1,024 tasks per
generation. Each worker count is a fresh run of fiber-es through fiberrun; its HDF5 log gives the
time of every generation and the master's own part of it (master_seconds: all but the waits on
the pool). One CSV line per generation on stdout:

    workers,generation,seconds,master_seconds,population,step_sleep_us,episode_steps

    /usr/bin/python3 es_scaling.py BUILD_DIR [--workers 1 2 4 ...] [--generations G]
        [--step-sleep-us S] [--population P]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import h5py

EPISODE_STEPS = 200  # Pendulum-v1 always runs 200 steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory (fiberrun, apps/es/fiber-es)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--step-sleep-us", type=int, default=50)
    parser.add_argument("--population", type=int, default=2048)
    args = parser.parse_args()
    if min(args.workers + [args.generations, args.step_sleep_us, args.population]) <= 0:
        parser.error("worker counts, --generations, --step-sleep-us, --population: positive")
    fiberrun = os.path.join(args.build, "libfiber", "fiberrun")
    fiber_es = os.path.join(args.build, "apps", "es", "fiber-es")
    with tempfile.TemporaryDirectory(prefix="fiber-es-scaling-") as work:
        for workers in args.workers:
            log = os.path.join(work, f"run-{workers}.h5")
            command = [fiberrun, "-n", "1", fiber_es, "--env", "Pendulum-v1",
                       "--population", str(args.population), "--pairs-per-task", "1",
                       "--eval-episodes", "0", "--hidden", "16", "16",
                       "--noise-size", "1000000", "--generations", str(args.generations),
                       "--checkpoint-every", str(args.generations), "--workers", str(workers),
                       "--step-sleep-us", str(args.step_sleep_us), "--output", log]
            print(f"es_scaling: {workers} workers", file=sys.stderr, flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            with h5py.File(log) as f:
                rows = f["log"].attrs["rows"]
                cumulative = f["log/seconds"][:rows]
                master = f["log/master_seconds"][:rows]
            previous = 0.0
            for generation in range(rows):
                seconds = cumulative[generation] - previous
                previous = cumulative[generation]
                print(f"{workers},{generation},{seconds:.6f},{master[generation]:.6f},"
                      f"{args.population},{args.step_sleep_us},{EPISODE_STEPS}", flush=True)
                print(f"es_scaling: {workers:3d} workers generation {generation}: "
                      f"{seconds:8.3f} s, master {master[generation] * 1e3:7.2f} ms",
                      file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
