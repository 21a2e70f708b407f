#!/usr/bin/python3
"""PPO scaling on a simulation-heavy workload: fiber-ppo on Humanoid-v5 (humanoid.toml's networks
and update: 64x64, 10 epochs of 32 minibatches) with a simulated cost per step (--step-sleep-us),
on 4 simulated nodes (tests/multinode's launcher), with 1 to 64 workers, as many environment
slots as workers and a fixed number of steps per slot; and an 8-worker run on one node (the
paper's baseline: a multiprocessing pool on one machine). Then the update by itself
(build/benchmarks/ppo_update/ppo_update) at each run's samples and at the 256-worker iteration's.

One CSV line per iteration of each run (kind "run": the run log's rollout and update seconds,
wall; the segment tasks' own seconds from the tasks log), and one per update measured alone
(kind "update": CPU seconds of ppo_update, and of the GEMMs of its shapes):

    kind,workers,nodes,iteration,samples,step_sleep_us,rollout_seconds,update_seconds,
    task_seconds_max,task_seconds_mean,gemm_seconds

    /usr/bin/python3 ppo_scaling.py BUILD_DIR [--workers 1 2 4 ...] [--steps S]
        [--step-sleep-us US] [--iterations I] [--nodes K] [--project-to W] [--header]
"""

import argparse
import os
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import simulated_nodes  # noqa: E402

CONFIG = os.path.join(simulated_nodes.ROOT, "apps", "ppo", "configs", "humanoid.toml")
HEADER = ("kind,workers,nodes,iteration,samples,step_sleep_us,rollout_seconds,update_seconds,"
          "task_seconds_max,task_seconds_mean,gemm_seconds")
BASELINE_WORKERS = 8  # the paper's multiprocessing pool, on one node
UPDATE_REPEATS = 2    # ppo_update's measurements of each (the smallest kept)


def run(build, work, workers, nodes, args):
    """Runs fiber-ppo once and prints a CSV line per iteration."""
    hostfile = os.path.join(work, "hostfile")
    simulated_nodes.write_hostfile(hostfile, workers, nodes)
    log = os.path.join(work, "run.h5")
    samples = workers * args.steps
    command = ["mpirun", "-n", "1", os.path.join(build, "apps", "ppo", "fiber-ppo"),
               "--config", CONFIG, "--envs", str(workers), "--steps", str(args.steps),
               "--total-timesteps", str(args.iterations * samples), "--workers", str(workers),
               "--step-sleep-us", str(args.step_sleep_us), "--eval-every", "0",
               "--eval-episodes", "1", "--rollout-log", "summary", "--output", log,
               "--overwrite"]
    result = subprocess.run(command, env=simulated_nodes.launch_environment(hostfile), stdout=subprocess.PIPE,
                            text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"ppo_scaling: fiber-ppo with {workers} workers on {nodes} nodes failed "
                 f"(status {result.returncode})")
    with h5py.File(log) as run_log, h5py.File(os.path.join(work, "run.tasks.h5")) as tasks:
        rows = run_log["log"].attrs["rows"]
        task_rows = tasks["log"].attrs["rows"]
        task_iterations = tasks["log/iteration"][:task_rows]
        task_seconds = tasks["log/seconds"][:task_rows]
        for i in range(rows):
            mine = task_seconds[task_iterations == i]
            print(f"run,{workers},{nodes},{i},{samples},{args.step_sleep_us},"
                  f"{run_log['log/rollout_seconds'][i]:.6f},"
                  f"{run_log['log/update_seconds'][i]:.6f},{mine.max():.6f},{mine.mean():.6f},",
                  flush=True)


def update(build, samples, args):
    """ppo_update at `samples` (humanoid.toml's epochs and minibatches): a CSV line."""
    result = subprocess.run(
        [os.path.join(build, "benchmarks", "ppo_update", "ppo_update"), "--samples",
         str(samples), "--repeats", str(UPDATE_REPEATS)],
        stdout=subprocess.PIPE, text=True, check=True)
    fields = result.stdout.strip().split(",")
    update_seconds, gemm_seconds = fields[8], fields[9]
    print(f"update,,,,{samples},,,{update_seconds},,,{gemm_seconds}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory (apps/ppo/fiber-ppo, "
                                      "benchmarks/ppo_update/ppo_update)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--steps", type=int, default=64, help="steps per slot per iteration")
    parser.add_argument("--step-sleep-us", type=int, default=5000,
                        help="simulated cost of a step (fiber-ppo --step-sleep-us)")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--project-to", type=int, default=256,
                        help="the workers of the projection: its update is measured too")
    parser.add_argument("--header", action="store_true", help="print the CSV header first")
    args = parser.parse_args()
    if min(args.workers + [args.steps, args.nodes, args.project_to]) <= 0 or \
            args.step_sleep_us < 0 or args.iterations < 2:
        parser.error("workers, --steps, --nodes, --project-to: positive; --step-sleep-us: "
                     ">= 0; --iterations: at least 2")
    if args.project_to < max(args.workers + [BASELINE_WORKERS]):
        parser.error("--project-to: at least the largest run's workers (report.py takes the "
                     "largest update measured for the projection's)")
    if args.header:
        print(HEADER, flush=True)
    layouts = [(workers, args.nodes) for workers in args.workers] + [(BASELINE_WORKERS, 1)]
    with tempfile.TemporaryDirectory(prefix="fiber-ppo-scaling-") as work:
        for workers, nodes in layouts:
            print(f"ppo_scaling: {workers} workers on {nodes} nodes", file=sys.stderr, flush=True)
            run(args.build, work, workers, nodes, args)
    for samples in sorted({w * args.steps for w in args.workers + [args.project_to]}):
        print(f"ppo_scaling: the update alone, {samples} samples", file=sys.stderr, flush=True)
        update(args.build, samples, args)


if __name__ == "__main__":
    main()
