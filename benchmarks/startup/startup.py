#!/usr/bin/python3
"""Where a pool's start-up goes, per worker: fiber_startup on simulated nodes (tests/multinode's
launcher), one mpirun per pool size. The program's probe gives each worker's moments (exec,
program loaded, MPI_Init_thread, hello) and the master's (its spawn call, the pool's
construction, the first call and a second one); this script adds the CPU of the job's
processes by role from /proc (mpirun, the node daemons, the workers, their task processes) at
each phase the program announces, and times the job's end (the master's, then the workers'
leaving until mpirun exits), and prints one CSV line per figure:

    workers,nodes,measure,value

Per-worker figures are CPU milliseconds per worker (the sum over the workers, or the master's or
mpirun's CPU, divided by the workers started) or wall seconds (median and largest over the
workers, from the master's spawn call). Serial is what one process does for every worker (the
master, mpirun); parallel is what each worker, or each node's daemon, does for itself
(docs/guide/benchmarks.md, "Start-up").

    /usr/bin/python3 startup.py BUILD [--workers 128 256] [--nodes 4] [--header]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import proc_cpu  # noqa: E402
import simulated_nodes  # noqa: E402

HEADER = "workers,nodes,measure,value"
PROGRAM = "fiber_startup"
RECORD_FIELDS = ("pid,host,exec_wall,loaded_wall,loaded_cpu,init_begin_wall,init_begin_cpu,"
                 "init_end_wall,init_end_cpu,hello_wall,hello_cpu").split(",")
# Seconds the program pauses after each phase line: the /proc reading below takes about 0.3 s
# with 1,024 workers (2,000 processes) on this machine.
PAUSE = 2
# How often the job's end is looked at (seconds): finer than its parts, which take seconds.
END_POLL = 0.05


def job_cpu(mpirun, roles):
    """{role: CPU seconds} of the job from `roles` (proc_cpu.job_processes): mpirun, the node
    daemons, the master, the workers and their task processes."""
    totals = dict.fromkeys(("mpirun", "daemons", "master", "workers", "task_processes"), 0.0)
    for pid, (role, seconds) in roles.items():
        if role == "launchers":
            role = "mpirun" if pid == mpirun else "daemons"
        totals[role] += seconds
    return totals


def descendants(root):
    """How many processes descend from `root` now (as fiberrun counts a job's processes)."""
    tree = proc_cpu.children_by_parent()
    count, pending = 0, [root]
    while pending:
        children = tree.get(pending.pop(), [])
        count += len(children)
        pending += [child for child, _ in children]
    return count


def wait_for_end(process, master):
    """Times the job's end once the master printed its last line: (seconds until the master's
    process is gone: the runtime's end; seconds from then until mpirun exits: the workers
    leaving, the daemons reporting; the job's processes left when the master was gone)."""
    started = time.monotonic()
    while os.path.exists(f"/proc/{master}") and process.poll() is None:
        time.sleep(END_POLL)
    master_gone = time.monotonic()
    left = descendants(process.pid)
    process.wait()
    return master_gone - started, time.monotonic() - master_gone, left


def run(build, work, workers, nodes):
    """Runs fiber_startup once; returns {measure: value}."""
    hostfile = os.path.join(work, "hostfile")
    simulated_nodes.write_hostfile(hostfile, workers, nodes)
    records = tempfile.mkdtemp(dir=work)
    program = os.path.join(build, "benchmarks", "startup", PROGRAM)
    command = ["mpirun", "-n", "1", program, "--workers", str(workers), "--records", records,
               "--pause", str(PAUSE)]
    env = simulated_nodes.launch_environment(
        hostfile, OMPI_MCA_pmix_server_max_wait=simulated_nodes.PMIX_SERVER_MAX_WAIT)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    cpu, master, records_of, master_pid = {}, {}, [], None
    for line in process.stdout:
        kind, _, rest = line.strip().partition(" " if line.startswith("phase ") else ",")
        if kind == "phase":
            roles = proc_cpu.job_processes(process.pid, PROGRAM)
            cpu[rest] = job_cpu(process.pid, roles)
            master_pid = next((pid for pid, (role, _) in roles.items() if role == "master"),
                              master_pid)
        elif kind == "master":
            name, value = rest.split(",")
            master[name] = float(value)
        elif kind == "worker":
            record = dict(zip(RECORD_FIELDS, rest.split(",")))
            records_of.append({k: v if k == "host" else float(v) for k, v in record.items()})
            if len(records_of) == workers:
                end = wait_for_end(process, master_pid)
    status = process.wait()
    if status != 0 or len(records_of) != workers or len(cpu) != 4:
        sys.exit(f"startup: {workers} workers on {nodes} nodes failed (mpirun's status "
                 f"{status}, {len(records_of)} worker records, {len(cpu)} of 4 phases)")
    out = figures(workers, cpu, master, records_of)
    out["master_end_seconds"], out["job_end_seconds"], out["processes_at_master_end"] = end
    return out


def figures(workers, cpu, master, records):
    """The per-worker figures of one run."""
    per_worker_ms = 1e3 / workers

    def between(first, last, role):
        return cpu[last][role] - cpu[first][role]

    spawn_begin = master["spawn_begin_wall"]
    out = {
        "spawn_calls": master["spawn_calls"],
        "pool_seconds": master["pool_seconds"],
        "spawn_seconds": master["spawn_seconds"],
        # serial: the master and mpirun, for every worker
        "master_spawn_ms": master["spawn_cpu"] * per_worker_ms,
        "master_hello_welcome_ms": (master["pool_cpu"] - master["spawn_cpu"]) * per_worker_ms,
        "mpirun_ms": between("started", "ready", "mpirun") * per_worker_ms,
        # parallel: each node's daemon for its workers, each worker for itself
        "daemons_ms": between("started", "ready", "daemons") * per_worker_ms,
        "worker_load_ms": statistics.fmean(r["loaded_cpu"] for r in records) * 1e3,
        "worker_before_init_ms": statistics.fmean(
            r["init_begin_cpu"] - r["loaded_cpu"] for r in records) * 1e3,
        "worker_init_ms": statistics.fmean(
            r["init_end_cpu"] - r["init_begin_cpu"] for r in records) * 1e3,
        "worker_init_least_ms": min(
            r["init_end_cpu"] - r["init_begin_cpu"] for r in records) * 1e3,
        "worker_hello_ms": statistics.fmean(
            r["hello_cpu"] - r["init_end_cpu"] for r in records) * 1e3,
        "workers_proc_ms": between("started", "ready", "workers") * per_worker_ms,
        # the first call forks each worker's task process; the second does not
        "fork_call_ms": (between("ready", "first_call", "workers")
                         + between("ready", "first_call", "task_processes")
                         - between("first_call", "second_call", "workers")
                         - between("first_call", "second_call", "task_processes"))
        * per_worker_ms,
        "first_call_seconds": master["first_call_seconds"],
        "second_call_seconds": master["second_call_seconds"],
    }
    # wall moments from the spawn call's start: median and largest over the workers
    moments = {
        "exec": [r["exec_wall"] - spawn_begin for r in records],
        "init_begin": [r["init_begin_wall"] - spawn_begin for r in records],
        "init_end": [r["init_end_wall"] - spawn_begin for r in records],
        "hello": [r["hello_wall"] - spawn_begin for r in records],
    }
    for name, values in moments.items():
        out[f"{name}_median_s"] = statistics.median(values)
        out[f"{name}_last_s"] = max(values)
    out["init_wall_median_s"] = statistics.median(
        r["init_end_wall"] - r["init_begin_wall"] for r in records)
    out["spawn_returned_s"] = master["spawn_seconds"]
    # The share of the machine's processors the workers' MPI_Init took while the spawn ran: 1.0
    # when they took all of it (they poll while they wait for the spawn's last member).
    out["workers_init_share"] = (sum(r["init_end_cpu"] - r["init_begin_cpu"] for r in records)
                                 / (os.cpu_count() * master["spawn_seconds"]))
    out["serial_ms"] = out["master_spawn_ms"] + out["master_hello_welcome_ms"] + out["mpirun_ms"]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory (benchmarks/startup/fiber_startup)")
    parser.add_argument("--workers", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--header", action="store_true", help="print the CSV header first")
    args = parser.parse_args()
    if min(args.workers + [args.nodes]) <= 0:
        parser.error("worker and node counts must be positive")
    if args.header:
        print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="fiber-startup-") as work:
        for workers in args.workers:
            print(f"startup: {workers} workers on {args.nodes} nodes", file=sys.stderr, flush=True)
            for measure, value in run(args.build, work, workers, args.nodes).items():
                print(f"{workers},{args.nodes},{measure},{value:.6g}", flush=True)


if __name__ == "__main__":
    main()
