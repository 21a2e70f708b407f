#!/usr/bin/python3
"""ES scaling as CPU and bytes: fiber-es on 4 simulated nodes (tests/multinode's launcher), with 1
to 128 workers and policies of 353 (Pendulum-v1), ~29k and ~167k parameters (Humanoid-MuJoCoModel), at the
paper's population of 2,048 (1,024 tasks of one antithetic pair). Each run is one mpirun whose
master has the PMPI counting library (build/benchmarks/mpi_counts) preloaded. Two kinds of
snapshot, each of the master's CPU time (all its threads) and MPI counters (messages and bytes
sent and received, spawn calls, CPU in polls that found nothing):

  - "ready": when the master's log says the pool is ready, read by this script, with the CPU
    time of mpirun and its node daemons (orted) from /proc (ticks of 10 ms);
  - "generation": taken by the library in the master when fiber-es flushes a generation's log
    line (CPU from the master's own clock, nanoseconds).

One CSV line per snapshot on stdout (benchmarks/es_scaling/report.py turns differences between
snapshots into per-generation figures):

    policy,parameters,population,workers,nodes,event,generation,wall_seconds,master_cpu_seconds,
    launcher_cpu_seconds,sent_messages,sent_bytes,received_messages,received_bytes,spawn_calls,
    spawned_processes,collective_calls,collective_bytes,idle_poll_nanoseconds,received_heartbeats,
    transport_nanoseconds,workers_lost,exit_status

idle_poll_nanoseconds: the master's CPU time in polls that found nothing (MPI tests that completed
nothing, fiber's sched_yield between them): waiting, not work. received_heartbeats: the received
messages that were workers' heartbeats (their number follows the wall time of the tasks, which
128 workers on 2 cores stretch: report.py projects them from fiber's heartbeat interval instead).
transport_nanoseconds: the master's CPU inside MPI calls that did something (sends, receives, tests
that completed): here TCP over loopback through the kernel, ~10-20 us a message, which a
cluster's network replaces (report.py counts the stated network's cost per message instead). workers_lost: the workers fiber
took for lost in the whole run (silent past its worker timeout, e.g. while 128 workers start on
2 cores) and replaced, which adds spawns. exit_status: mpirun's; a run that completed every
generation is kept even when its teardown failed (said on stderr).
The workers are spread evenly over the nodes: each node has ceil((workers + 1) / nodes) slots
(the master takes one on nodeA); --also adds runs on other node counts.

    /usr/bin/python3 es_scaling.py BUILD_DIR [--workers 1 4 16 ...] [--policies NAME ...]
        [--generations G] [--population P] [--nodes K] [--also WORKERS:NODES ...]
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import proc_cpu  # noqa: E402
import simulated_nodes  # noqa: E402
# name: (environment, hidden sizes); parameters = the MLP's weights and biases.
POLICIES = {
    "pendulum-353": ("Pendulum-v1", [16, 16]),
    "humanoid-29k": ("Humanoid-MuJoCoModel", [58, 58]),
    "humanoid-167k": ("Humanoid-MuJoCoModel", [242, 242]),
}
NOISE_SIZE = 2_000_000  # entries of the noise table: larger than every policy here
# The counting library's file: magic, pid, then the counters in this order (mpi_counts.cpp).
COUNTERS = ("sent_messages", "sent_bytes", "received_messages", "received_bytes", "spawn_calls",
            "spawned_processes", "collective_calls", "collective_bytes", "idle_poll_nanoseconds",
            "received_heartbeats", "transport_nanoseconds")
COUNTS_FORMAT = f"={3 + len(COUNTERS)}Q"  # magic, pid, the counters, the snapshots taken
SNAPSHOT_FORMAT = f"={1 + len(COUNTERS)}Q"  # the master's CPU nanoseconds, the counters
MAX_SNAPSHOTS = 4096  # kMaxSnapshots in mpi_counts.cpp
COUNTS_MAGIC = 0x46424D5049434E54
HEADER = ("policy,parameters,population,workers,nodes,event,generation,wall_seconds,"
          "master_cpu_seconds,launcher_cpu_seconds," + ",".join(COUNTERS)
          + ",workers_lost,exit_status")
# What fiber logs when it takes a worker for lost (and replaces it).
LOST_WORKER = "stopped answering"


def count_lost_workers(stream, lost, marker=LOST_WORKER):
    """Passes the job's stderr on, counting in lost[0] its lines that hold `marker` (by default
    fiber's line for a worker taken for lost by its silence)."""
    for line in stream:
        if marker in line:
            lost[0] += 1
        sys.stderr.write(line)


def read_counts(path):
    """(master pid, {counter: value}, [(cpu seconds, {counter: value}) per snapshot]) from the
    counting library's file."""
    with open(path, "rb") as counts:
        data = counts.read()
    header = struct.calcsize(COUNTS_FORMAT)
    values = struct.unpack_from(COUNTS_FORMAT, data)
    if values[0] != COUNTS_MAGIC:
        sys.exit(f"es_scaling: {path} is not the counting library's file")
    taken = min(values[-1], MAX_SNAPSHOTS)
    size = struct.calcsize(SNAPSHOT_FORMAT)
    snapshots = []
    for index in range(taken):
        cpu, *tallies = struct.unpack_from(SNAPSHOT_FORMAT, data, header + index * size)
        snapshots.append((cpu / 1e9, dict(zip(COUNTERS, tallies))))
    return values[1], dict(zip(COUNTERS, values[2:-1])), snapshots


def run(build, work, policy, workers, nodes, args):
    """Runs fiber-es once and prints a CSV line per snapshot."""
    environment, hidden = POLICIES[policy]
    hostfile = os.path.join(work, "hostfile")
    simulated_nodes.write_hostfile(hostfile, workers, nodes)
    counts_path = os.path.join(work, "counts")
    if os.path.exists(counts_path):
        os.remove(counts_path)
    library = os.path.join(build, "benchmarks", "mpi_counts", "libfiber_mpi_counts.so")
    env = simulated_nodes.launch_environment(hostfile, FIBER_MPI_COUNTS=counts_path)
    preload = ["env", f"LD_PRELOAD={library}"]
    log = os.path.join(work, "run.h5")
    command = ["mpirun", "-n", "1", *preload, os.path.join(build, "apps", "es", "fiber-es"),
               "--env", environment, "--hidden", *map(str, hidden),
               "--population", str(args.population), "--pairs-per-task", "1",
               "--eval-episodes", "0", "--noise-size", str(NOISE_SIZE),
               "--generations", str(args.generations), "--checkpoint-every",
               str(args.generations), "--workers", str(workers), "--step-sleep-us", "0",
               "--output", log, "--overwrite"]
    started = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lost = [0]
    errors = threading.Thread(target=count_lost_workers, args=(process.stderr, lost))
    errors.start()
    ready, generations = None, []
    for line in process.stdout:
        if line.startswith("fiber-es: ") and " parameters, " in line:
            # "fiber-es: ENV, P parameters, population N, W workers on HOSTS, log PATH"
            parameters = int(line.split(",")[1].split()[0])
            hosts = line.split(" workers on ", 1)[1].rsplit(", log ", 1)[0]
            nodes = len(set(hosts.split(",")))
            pid, counts, _ = read_counts(counts_path)
            ready = (time.monotonic() - started, proc_cpu.process_cpu_seconds(pid),
                     proc_cpu.launcher_cpu_seconds(process.pid, "fiber-es"), counts)
        elif line.startswith("gen "):
            generations.append((int(line.split()[1]), time.monotonic() - started))
            print(f"es_scaling: {policy}, {workers} workers: {line.strip()}", file=sys.stderr,
                  flush=True)
    status = process.wait()
    errors.join()
    if ready is None or len(generations) < args.generations:
        sys.exit(f"es_scaling: fiber-es with {workers} workers ({policy}) failed "
                 f"(status {status})")
    if status != 0:
        print(f"es_scaling: warning: fiber-es with {workers} workers ({policy}) ran every "
              f"generation but mpirun exited with status {status}", file=sys.stderr, flush=True)
    _, _, snapshots = read_counts(counts_path)
    if len(snapshots) != len(generations):
        sys.exit(f"es_scaling: {len(snapshots)} snapshots of the counters for "
                 f"{len(generations)} generations ({policy}, {workers} workers)")
    prefix = f"{policy},{parameters},{args.population},{workers},{nodes}"
    wall, master_cpu, launcher_cpu, counts = ready
    print(f"{prefix},ready,-1,{wall:.3f},{master_cpu:.6f},{launcher_cpu:.3f},"
          + ",".join(str(counts[name]) for name in COUNTERS) + f",{lost[0]},{status}", flush=True)
    for (generation, wall), (master_cpu, counts) in zip(generations, snapshots):
        print(f"{prefix},generation,{generation},{wall:.3f},{master_cpu:.6f},,"
              + ",".join(str(counts[name]) for name in COUNTERS) + f",{lost[0]},{status}",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build",
                        help="the build directory (apps/es/fiber-es, benchmarks/mpi_counts)")
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 4, 16, 64, 128])
    parser.add_argument("--policies", nargs="+", choices=sorted(POLICIES), default=list(POLICIES))
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--population", type=int, default=2048)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--also", nargs="*", default=[], metavar="WORKERS:NODES",
                        help="more runs on other node counts (so that per-node costs can be told "
                             "from per-worker ones), e.g. 64:2")
    parser.add_argument("--header", action="store_true", help="print the CSV header first")
    args = parser.parse_args()
    layouts = [(workers, args.nodes) for workers in args.workers]
    try:
        layouts += [tuple(int(part) for part in extra.split(":")) for extra in args.also]
    except ValueError:
        parser.error("--also takes WORKERS:NODES, e.g. 64:2")
    if (min([value for layout in layouts for value in layout] + [args.population]) <= 0
            or any(len(layout) != 2 for layout in layouts) or args.generations < 2):
        parser.error("worker and node counts, --population: positive; --generations: at least 2")
    if args.header:
        print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="fiber-es-scaling-") as work:
        for policy in args.policies:
            for workers, nodes in layouts:
                print(f"es_scaling: {policy}, {workers} workers on {nodes} nodes", file=sys.stderr,
                      flush=True)
                run(args.build, work, policy, workers, nodes, args)


if __name__ == "__main__":
    main()
