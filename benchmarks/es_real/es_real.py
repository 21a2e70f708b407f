#!/usr/bin/python3
"""The Fiber paper's ES scaling experiment run for real on this machine: fiber-es at the paper's
population (2,048: 1,024 tasks of one antithetic pair per generation), each task made to take the
paper's 0.92 s (Pendulum-v1, 2 episodes of 200 steps, --step-sleep-us STEP_SLEEP_US), on 32 to
1,024 workers of simulated nodes (tests/multinode's launcher, under fiberrun): the master alone
on nodeA, the workers on nodes of --slots slots, so that every worker is remote (as on a cluster;
no lane). A few generations per worker count; with --fault, the run at that count has two more:
one in which --kills workers (never the master) are SIGKILLed at random moments, one after.

One CSV line per generation of each run, its figures over that generation (between two of
fiber-es's generation lines; the first from the pool's ready line):

    kind,workers,nodes,slots,generation,start_seconds,wall_seconds,step_sleep_us,tasks,
    distinct_tasks,task_seconds_median,busiest_worker_task_seconds,task_seconds_total,pool_size,
    master_cpu,master_idle_poll,worker_cpu,worker_cpu_median,worker_cpu_max,task_cpu,launcher_cpu,
    machine_cpu,pss_processes,pss_worker_bytes,pss_task_bytes,kills,workers_lost,workers_new,
    exit_status,cores

kind: fiber (peer.py's rows: the peer's name). start_seconds: from the launch to the pool's ready
line. tasks, distinct_tasks, task_seconds_*: fiber-es's rollout log (one row per task as the master
recorded its result: a result counted twice or lost shows as tasks != distinct_tasks or != 1,024);
busiest worker: the most task seconds one worker ran. pool_size: as fiber-es's line says. CPU
seconds: the master's (all threads) and its polls that found nothing (the PMPI counting library,
build/benchmarks/mpi_counts, preloaded into the master), and from /proc (benchmarks/proc_cpu.py) at
each generation line: the workers' (all), the median and the busiest worker's, the task processes',
the launchers' (fiberrun, mpirun, the node daemons), and the machine's busy time (/proc/stat: every
process, other jobs and this script included). PSS (/proc/PID/smaps_rollup), read from the start of
the PSS reading's generations (the last; one per PSS_WORKERS_PER_GENERATION workers, which the
report leaves out of the times, as reading 2,000 processes' smaps costs CPU) and given in the
first of them: the workers' and their task processes' sums, and how many workers (those whose
processes could all be read before the job's end). kills: the workers SIGKILLed in that
generation; workers_lost: those fiber took for lost by that generation's line since the previous one
(its "its tasks go to other workers" lines); workers_new, in the kills' generation's row: worker
processes first seen after the kills, by the run's end (the replacements); exit_status: fiberrun's
(a run that completed every generation is kept when its teardown was cut, e.g. by fiberrun's grace
after the master's end at 1,024 workers, and said so on stderr); cores: this machine's processors.

    /usr/bin/python3 es_real.py BUILD_DIR [--workers 32 64 ...] [--generations G] [--slots S]
        [--fault W] [--kills K] [--seed N] [--header]
"""

import argparse
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "es_scaling"))
import es_paper  # noqa: E402
import es_scaling  # noqa: E402  (the counting library's file)
import proc_cpu  # noqa: E402
from proc_memory import pss_bytes  # noqa: E402
import simulated_nodes  # noqa: E402

PROGRAM = "fiber-es"
ENVIRONMENT, HIDDEN = "Pendulum-v1", (16, 16)  # es_scaling's pendulum-353
STEPS_PER_TASK = 2 * 200  # an antithetic pair: 2 episodes of Pendulum-v1's fixed 200 steps
# The sleep per step that makes a task's episodes the paper's 0.92 s (their simulation and
# policy add ~1-2 ms of CPU per task on a core of its own: report.py shows the measured time).
STEP_SLEEP_US = round(es_paper.TAU / STEPS_PER_TASK * 1e6)
NOISE_SIZE = 2_000_000  # entries of the noise table, es_scaling's
HEADER = ("kind,workers,nodes,slots,generation,start_seconds,wall_seconds,step_sleep_us,tasks,"
          "distinct_tasks,task_seconds_median,busiest_worker_task_seconds,task_seconds_total,"
          "pool_size,master_cpu,master_idle_poll,worker_cpu,worker_cpu_median,worker_cpu_max,"
          "task_cpu,launcher_cpu,machine_cpu,pss_processes,pss_worker_bytes,pss_task_bytes,kills,"
          "workers_lost,workers_new,exit_status,cores")
# Workers whose PSS (with their task processes') is read per generation: reading 2,000
# processes' smaps took longer than a 1,024-worker generation (484 of 1,024 workers were read
# before the job's end), so the run has one more generation, left out of the times as the
# reading's first is, per this many workers past the first PSS_WORKERS_PER_GENERATION.
PSS_WORKERS_PER_GENERATION = 256
# The kills fall in the first KILL_WINDOW of the generation's ideal time: the generation takes at
# least that long, so each falls inside it, while tasks run.
KILL_WINDOW = 0.9
LOST_WORKER = "its tasks go to other workers"  # fiber's line for each worker taken for lost


class Snapshots:
    """CPU by role and by worker, and the machine's busy time, read from /proc at moments of the
    run. A process that ended keeps the CPU it had when last seen."""

    def __init__(self, launcher, daemons_marker):
        self.launcher, self.daemons_marker = launcher, daemons_marker
        self.seen = {}  # {pid: (role, CPU seconds)} of every process of the job seen
        self.taken = []  # per snapshot: ({role: CPU seconds}, {worker pid: CPU seconds}, busy)

    def take(self):
        self.seen.update(proc_cpu.job_processes(self.launcher, PROGRAM, self.daemons_marker))
        totals = dict.fromkeys(proc_cpu.ROLES, 0.0)
        for role, seconds in self.seen.values():
            totals[role] += seconds
        workers = {pid: seconds for pid, (role, seconds) in self.seen.items() if role == "workers"}
        self.taken.append((totals, workers, proc_cpu.machine_busy_seconds()))

    def live_workers(self):
        """The pids of the workers of the last snapshot that are still alive."""
        return [pid for pid in self.taken[-1][1] if os.path.exists(f"/proc/{pid}")]


def job_pss(launcher, daemons_marker):
    """(workers read, their PSS, their task processes' PSS) of the job now, over the workers
    whose process and task processes could all be read (the job may end while 2,000 processes'
    smaps are read: a worker or task process gone by then leaves its pair out)."""
    roles = proc_cpu.job_processes(launcher, PROGRAM, daemons_marker)
    tree = proc_cpu.children_by_parent()
    read, worker_total, task_total = 0, 0, 0
    for pid, (role, _) in roles.items():
        if role != "workers":
            continue
        tasks = [child for child, _ in tree.get(pid, [])]
        sizes = [pss_bytes(pid)] + [pss_bytes(child) for child in tasks]
        if tasks and None not in sizes:
            read, worker_total, task_total = read + 1, worker_total + sizes[0], \
                task_total + sum(sizes[1:])
    return read, worker_total, task_total


def kill_workers(workers, count, window, rng, killed):
    """SIGKILLs `count` of `workers` (pids), each at a random moment of the next `window` seconds;
    appends each pid killed to `killed`."""
    moments = sorted(rng.uniform(0, window) for _ in range(count))
    started = time.monotonic()
    for pid, moment in zip(rng.sample(workers, count), moments):
        time.sleep(max(0.0, started + moment - time.monotonic()))
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            print(f"es_real: worker {pid} had already ended", file=sys.stderr, flush=True)


def task_figures(path, generations):
    """Per generation, from fiber-es's rollout log (summary: a row per task): (rows, distinct
    tasks, median task seconds, the busiest worker's task seconds, all tasks' seconds)."""
    with h5py.File(path) as log:
        rows = int(log["log"].attrs["rows"])
        generation = log["log/generation"][:rows]
        task = log["log/task"][:rows]
        worker = log["log/worker"][:rows]
        seconds = log["log/seconds"][:rows]
    figures = []
    for g in range(generations):
        mine = generation == g
        per_worker = {}
        for w, s in zip(worker[mine], seconds[mine]):
            per_worker[int(w)] = per_worker.get(int(w), 0.0) + float(s)
        figures.append((int(mine.sum()), len(set(task[mine].tolist())),
                        statistics.median(seconds[mine].tolist()) if mine.any() else math.nan,
                        max(per_worker.values(), default=math.nan), float(seconds[mine].sum())))
    return figures


class Plan:
    """What one run does: its generations, and which of them (if any) has the kills."""

    def __init__(self, workers, args):
        self.workers = workers
        self.faulty = workers == args.fault
        # With the kills: after the timed generations, the kills' generation and one for the
        # replacements to arrive, before the PSS reading's. The reading (which starts at the
        # first of them) has a generation per PSS_WORKERS_PER_GENERATION workers.
        pss_generations = math.ceil(workers / PSS_WORKERS_PER_GENERATION)
        self.generations = args.generations + (2 if self.faulty else 0) + pss_generations - 1
        self.fault_generation = args.generations - 1 if self.faulty else None
        self.pss_generation = self.generations - pss_generations


def fiber_es_command(build, workers, generations, log):
    """fiberrun running fiber-es (the counting library preloaded into it) on the workload."""
    library = os.path.join(build, "benchmarks", "mpi_counts", "libfiber_mpi_counts.so")
    return [os.path.join(build, "libfiber", "fiberrun"), "env", f"LD_PRELOAD={library}",
            os.path.join(build, "apps", "es", PROGRAM), "--env", ENVIRONMENT,
            "--hidden", *map(str, HIDDEN), "--population", str(2 * es_paper.TASKS),
            "--pairs-per-task", "1", "--eval-episodes", "0", "--noise-size", str(NOISE_SIZE),
            "--generations", str(generations), "--checkpoint-every", str(generations),
            "--workers", str(workers), "--step-sleep-us", str(STEP_SLEEP_US),
            "--rollout-log", "summary", "--output", log, "--overwrite"]


def run(build, work, plan, args):
    """Runs fiber-es once as `plan` says and prints a CSV line per generation."""
    workers = plan.workers
    hostfile = os.path.join(work, "hostfile")
    nodes = simulated_nodes.write_master_apart_hostfile(hostfile, workers, args.slots)
    counts_path = os.path.join(work, "counts")
    if os.path.exists(counts_path):
        os.remove(counts_path)
    env = simulated_nodes.launch_environment(
        hostfile, FIBER_MPI_COUNTS=counts_path,
        OMPI_MCA_pmix_server_max_wait=simulated_nodes.PMIX_SERVER_MAX_WAIT)
    command = fiber_es_command(build, workers, plan.generations, os.path.join(work, "run.h5"))
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lost = [0]
    errors = threading.Thread(target=es_scaling.count_lost_workers,
                              args=(process.stderr, lost, LOST_WORKER))
    errors.start()
    # The node daemons leave mpirun's tree: found by this run's counts file in their environment.
    marker = f"FIBER_MPI_COUNTS={counts_path}"
    snapshots = Snapshots(process.pid, marker)
    ready, lines, pss, killed, killer, before_kills = None, [], None, [], None, set()
    lost_by_line = []  # lost[0] at each generation line
    for line in process.stdout:
        if line.startswith(f"{PROGRAM}: ") and " parameters, " in line:
            ready = time.monotonic() - started
            _, ready_counts, _ = es_scaling.read_counts(counts_path)
            snapshots.take()
            print(f"es_real: {workers} workers: ready after {ready:.0f} s", file=sys.stderr,
                  flush=True)
        elif line.startswith("gen "):
            lines.append((time.monotonic(), int(line.split()[-2])))
            lost_by_line.append(lost[0])
            snapshots.take()
            print(f"es_real: {workers} workers: {line.strip()}", file=sys.stderr, flush=True)
            if len(lines) == plan.fault_generation:  # the kills' generation has begun
                before_kills = set(snapshots.taken[-1][1])
                window = KILL_WINDOW * es_paper.ideal_generation_seconds(workers)
                killer = threading.Thread(target=kill_workers, args=(
                    snapshots.live_workers(), args.kills, window, random.Random(args.seed),
                    killed))
                killer.start()
            if len(lines) == plan.pss_generation:
                pss = job_pss(process.pid, marker)
    status = process.wait()
    errors.join()
    if killer:
        killer.join()
    if ready is None or len(lines) < plan.generations:
        sys.exit(f"es_real: fiber-es with {workers} workers failed (status {status})")
    if status != 0:
        print(f"es_real: warning: fiber-es with {workers} workers ran every generation but "
              f"fiberrun exited with status {status}", file=sys.stderr, flush=True)
    _, _, counters = es_scaling.read_counts(counts_path)
    if len(counters) != len(lines):
        sys.exit(f"es_real: {len(counters)} snapshots of the counters for {len(lines)} "
                 f"generations ({workers} workers)")
    rollouts = task_figures(os.path.join(work, "run.rollouts.h5"), plan.generations)
    new_workers = len(set(snapshots.taken[-1][1]) - before_kills) if plan.faulty else 0
    times = [started + ready] + [moment for moment, _ in lines]
    idle_polls = [counts["idle_poll_nanoseconds"] / 1e9
                  for counts in [ready_counts] + [tallies for _, tallies in counters]]
    lost_by_line = [0] + lost_by_line
    for g in range(plan.generations):
        (roles0, workers0, busy0), (roles1, workers1, busy1) = snapshots.taken[g:g + 2]
        delta = {role: roles1[role] - roles0[role] for role in proc_cpu.ROLES}
        each = [cpu - workers0[pid] for pid, cpu in workers1.items() if pid in workers0]
        rows, distinct, median, busiest_tasks, total = rollouts[g]
        in_pss = pss if g == plan.pss_generation else ("", "", "")
        print(f"fiber,{workers},{nodes},{args.slots},{g},{ready:.3f},"
              f"{times[g + 1] - times[g]:.3f},{STEP_SLEEP_US},{rows},{distinct},{median:.4f},"
              f"{busiest_tasks:.4f},{total:.3f},{lines[g][1]},"
              f"{delta['master']:.2f},{idle_polls[g + 1] - idle_polls[g]:.4f},"
              f"{delta['workers']:.2f},{statistics.median(each):.3f},{max(each):.2f},"
              f"{delta['task_processes']:.2f},{delta['launchers']:.2f},"
              f"{busy1 - busy0:.2f},{in_pss[0]},{in_pss[1]},{in_pss[2]},"
              f"{len(killed) if g == plan.fault_generation else 0},"
              f"{lost_by_line[g + 1] - lost_by_line[g]},"
              f"{new_workers if g == plan.fault_generation else 0},{status},{os.cpu_count()}",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory (libfiber/fiberrun, apps/es/fiber-es, "
                                      "benchmarks/mpi_counts)")
    parser.add_argument("--workers", type=int, nargs="+", default=[32, 64, 128, 256, 512, 1024])
    parser.add_argument("--generations", type=int, default=4,
                        help="per run: the first is a warm-up, the last the PSS reading's (and "
                             f"one more per {PSS_WORKERS_PER_GENERATION} workers past the first "
                             f"{PSS_WORKERS_PER_GENERATION})")
    parser.add_argument("--slots", type=int, default=64, help="slots per simulated node")
    parser.add_argument("--fault", type=int, metavar="WORKERS",
                        help="the run of WORKERS workers (one of --workers) has 2 generations "
                             "more: one in which --kills workers are SIGKILLed, one after")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1, help="of the kills' victims and moments")
    parser.add_argument("--header", action="store_true", help="print the CSV header first")
    args = parser.parse_args()
    if min(args.workers + [args.slots, args.kills]) <= 0 or args.generations < 3:
        parser.error("workers, --slots, --kills: positive; --generations: at least 3 (a warm-up, "
                     "one timed, one for the PSS)")
    if args.fault is not None and (args.fault not in args.workers or args.kills >= args.fault):
        parser.error("--fault: one of --workers, with more workers than --kills")
    try:
        for workers in args.workers:
            simulated_nodes.write_master_apart_hostfile(os.devnull, workers, args.slots)
    except ValueError as error:
        parser.error(str(error))
    if args.header:
        print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="fiber-es-real-") as work:
        for workers in args.workers:
            plan = Plan(workers, args)
            print(f"es_real: {workers} workers on nodes of {args.slots} slots, "
                  f"{plan.generations} generations"
                  + (f", {args.kills} killed in generation {plan.fault_generation}"
                     if plan.faulty else ""), file=sys.stderr, flush=True)
            started = time.monotonic()
            run(args.build, work, plan, args)
            print(f"es_real: took {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
