#!/usr/bin/python3
"""PPO scaling on a simulation-heavy workload: fiber-ppo on Humanoid-v5 (humanoid.toml's networks
and update: 64x64, 10 epochs of 32 minibatches) with a simulated cost per step (--step-sleep-us),
on 4 simulated nodes (tests/multinode's launcher), with 1 to 64 workers, as many environment
slots as workers and a fixed number of steps per slot; and an 8-worker run on one node (the
paper's baseline: a multiprocessing pool on one machine). Then the replay of the paper's
comparison for real (--replay): one iteration of --project-to slots on the 8 workers of one node
and on each --replay count of workers on --replay-nodes nodes. Then the update by itself
(build/benchmarks/ppo_update/ppo_update) at each run's samples and at the --project-to
iteration's.

One CSV line per iteration of each run (kind "run", or "replay" for the runs of --project-to
slots: the run log's rollout and update seconds, wall; the segment tasks' own seconds from the
tasks log: the longest, the mean, and the most one worker ran; CPU seconds from /proc, sampled
every SAMPLE_SECONDS through the run (benchmarks/proc_cpu.py) and read at each phase's ends (the
update ends when the master prints the iteration's line; it began update_seconds before, the
rollout rollout_seconds before that): in the rollout, of the task processes (the simulators and
the policy), of the workers, of mpirun and the node daemons, of the master; in the update, of the
master, of all the job's other processes, and of the whole machine (/proc/stat, other jobs too)),
and one per update measured alone (kind "update": CPU seconds of ppo_update, and of the GEMMs of
its shapes):

    kind,workers,nodes,iteration,samples,step_sleep_us,rollout_seconds,update_seconds,
    task_seconds_max,task_seconds_mean,gemm_seconds,slots,worker_task_seconds_max,
    rollout_task_cpu,rollout_worker_cpu,rollout_launcher_cpu,rollout_master_cpu,
    update_master_cpu,update_others_cpu,update_machine_cpu

    /usr/bin/python3 ppo_scaling.py BUILD_DIR [--workers 1 2 4 ...] [--steps S]
        [--step-sleep-us US] [--iterations I] [--nodes K] [--project-to W]
        [--replay N ...] [--replay-nodes K] [--header]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import proc_cpu  # noqa: E402
import simulated_nodes  # noqa: E402

CONFIG = os.path.join(simulated_nodes.ROOT, "apps", "ppo", "configs", "humanoid.toml")
HEADER = ("kind,workers,nodes,iteration,samples,step_sleep_us,rollout_seconds,update_seconds,"
          "task_seconds_max,task_seconds_mean,gemm_seconds,slots,worker_task_seconds_max,"
          "rollout_task_cpu,rollout_worker_cpu,rollout_launcher_cpu,rollout_master_cpu,"
          "update_master_cpu,update_others_cpu,update_machine_cpu")
BASELINE_WORKERS = 8  # the paper's multiprocessing pool, on one node
UPDATE_REPEATS = 2    # ppo_update's measurements of each (the smallest kept)
SAMPLE_SECONDS = 0.25  # between two readings of the job's CPU in /proc (a reading costs ~1.6 ms
                       # of CPU per hundred processes: ~4 % of a core beside 256 workers)
ITERATION_LINE = "iter "  # fiber-ppo's line at the end of an iteration (after its update)


def run(build, work, kind, workers, nodes, slots, args):
    """Runs fiber-ppo once (`slots` environments of args.steps steps on `workers` workers) and
    prints a CSV line per iteration."""
    hostfile = os.path.join(work, "hostfile")
    simulated_nodes.write_hostfile(hostfile, workers, nodes)
    log = os.path.join(work, "run.h5")
    samples = slots * args.steps
    command = ["mpirun", "-n", "1", os.path.join(build, "apps", "ppo", "fiber-ppo"),
               "--config", CONFIG, "--envs", str(slots), "--steps", str(args.steps),
               "--total-timesteps", str(args.iterations * samples), "--workers", str(workers),
               "--step-sleep-us", str(args.step_sleep_us), "--eval-every", "0",
               "--eval-episodes", "1", "--rollout-log", "summary", "--output", log,
               "--overwrite"]
    process = subprocess.Popen(command, env=simulated_nodes.launch_environment(hostfile),
                               stdout=subprocess.PIPE, text=True)
    sampler = proc_cpu.JobSampler(process.pid, "fiber-ppo", SAMPLE_SECONDS)
    ends = []  # when each iteration's line came
    for line in process.stdout:
        if line.startswith(ITERATION_LINE):
            ends.append(time.monotonic())
    status = process.wait()
    sampler.stop()
    if status != 0:
        sys.exit(f"ppo_scaling: fiber-ppo with {workers} workers on {nodes} nodes failed "
                 f"(status {status})")
    with h5py.File(log) as run_log, h5py.File(os.path.join(work, "run.tasks.h5")) as tasks:
        rows = run_log["log"].attrs["rows"]
        task_rows = tasks["log"].attrs["rows"]
        task_iterations = tasks["log/iteration"][:task_rows]
        task_seconds = tasks["log/seconds"][:task_rows]
        task_workers = tasks["log/worker"][:task_rows]
        for i in range(rows):
            mine = task_iterations == i
            per_worker = max(task_seconds[mine & (task_workers == w)].sum()
                             for w in set(task_workers[mine]))
            rollout = run_log["log/rollout_seconds"][i]
            update_seconds = run_log["log/update_seconds"][i]
            update_start = ends[i] - update_seconds
            in_rollout = sampler.between(update_start - rollout, update_start)
            in_update = sampler.between(update_start, ends[i])
            others = sum(in_update[role] for role in proc_cpu.ROLES if role != "master")
            print(f"{kind},{workers},{nodes},{i},{samples},{args.step_sleep_us},{rollout:.6f},"
                  f"{update_seconds:.6f},{task_seconds[mine].max():.6f},"
                  f"{task_seconds[mine].mean():.6f},,{slots},{per_worker:.6f},"
                  f"{in_rollout['task_processes']:.3f},{in_rollout['workers']:.3f},"
                  f"{in_rollout['launchers']:.3f},{in_rollout['master']:.3f},"
                  f"{in_update['master']:.3f},{others:.3f},{in_update['machine']:.3f}",
                  flush=True)


def update(build, samples, args):
    """ppo_update at `samples` (humanoid.toml's epochs and minibatches): a CSV line."""
    result = subprocess.run(
        [os.path.join(build, "benchmarks", "ppo_update", "ppo_update"), "--samples",
         str(samples), "--repeats", str(UPDATE_REPEATS)],
        stdout=subprocess.PIPE, text=True, check=True)
    fields = result.stdout.strip().split(",")
    update_seconds, gemm_seconds = fields[8], fields[9]
    print(f"update,,,,{samples},,,{update_seconds},,,{gemm_seconds}" + "," * 9, flush=True)


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
    parser.add_argument("--replay", type=int, nargs="*", default=[],
                        help="workers of the runs of --project-to slots (beside the 8 on one "
                             "node)")
    parser.add_argument("--replay-nodes", type=int, default=8,
                        help="the simulated nodes of the --replay runs")
    parser.add_argument("--header", action="store_true", help="print the CSV header first")
    args = parser.parse_args()
    if min(args.workers + args.replay + [args.steps, args.nodes, args.project_to,
                                         args.replay_nodes]) <= 0 or \
            args.step_sleep_us < 0 or args.iterations < 2:
        parser.error("workers, --steps, --nodes, --project-to, --replay, --replay-nodes: "
                     "positive; --step-sleep-us: "
                     ">= 0; --iterations: at least 2")
    if args.project_to < max(args.workers + args.replay + [BASELINE_WORKERS]):
        parser.error("--project-to: at least the largest run's workers, --replay's too "
                     "(report.py takes the largest update measured for the projection's)")
    if args.header:
        print(HEADER, flush=True)
    layouts = [("run", workers, args.nodes, workers) for workers in args.workers] + \
        [("run", BASELINE_WORKERS, 1, BASELINE_WORKERS)]
    if args.replay:
        layouts += [("replay", BASELINE_WORKERS, 1, args.project_to)] + \
            [("replay", workers, args.replay_nodes, args.project_to) for workers in args.replay]
    with tempfile.TemporaryDirectory(prefix="fiber-ppo-scaling-") as work:
        for kind, workers, nodes, slots in layouts:
            print(f"ppo_scaling: {workers} workers on {nodes} nodes, {slots} slots",
                  file=sys.stderr, flush=True)
            started = time.monotonic()
            run(args.build, work, kind, workers, nodes, slots, args)
            print(f"ppo_scaling: took {time.monotonic() - started:.0f} s", file=sys.stderr,
                  flush=True)
    for samples in sorted({w * args.steps for w in args.workers + [args.project_to]}):
        print(f"ppo_scaling: the update alone, {samples} samples", file=sys.stderr, flush=True)
        update(args.build, samples, args)


if __name__ == "__main__":
    main()
