"""CPU time from /proc, for the scaling benchmarks (es_scaling, ppo_scaling, es_real): of a process
(all its threads, also ended ones), of a job's processes by role (the master, its workers, their
task processes, the launchers: fiberrun, mpirun and its node daemons, orted), and of the whole
machine (/proc/stat). Ticks of 10 ms (the kernel's USER_HZ); a process that ended between two
readings takes its CPU with it."""

import os
import threading
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# What launches a job's processes on each (simulated) node; under fiberrun, its rank supervisor
# (a fiberrun process under the node daemon) starts the master.
LAUNCHERS = ("fiberrun", "mpirun", "orted")
ROLES = ("master", "workers", "task_processes", "launchers")


def read_stat(pid):
    """(command name, parent pid, utime + stime in seconds, start time in ticks) of `pid`, or None
    if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text.rsplit(")", 1)[1].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[19])


def process_cpu_seconds(pid):
    """utime + stime of `pid` (all its threads, also ended ones), 0 if it is gone."""
    stat = read_stat(pid)
    return stat[2] if stat else 0.0


def machine_processes():
    """{pid: read_stat(pid)} over the machine's processes."""
    processes = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = read_stat(entry)
            if stat:
                processes[int(entry)] = stat
    return processes


def children_by_parent(processes=None):
    """{parent pid: [(child pid, command name)]} over the machine's processes."""
    tree = {}
    for pid, (name, parent, _, _) in (processes or machine_processes()).items():
        tree.setdefault(parent, []).append((pid, name))
    return tree


def launcher_cpu_seconds(mpirun, program):
    """CPU time of mpirun and of the node daemons (orted) it started (through the fake ssh's
    shells, not through `program`'s processes)."""
    tree = children_by_parent()
    total, pending = process_cpu_seconds(mpirun), [mpirun]
    while pending:
        for child, name in tree.get(pending.pop(), []):
            if name == "orted":
                total += process_cpu_seconds(child)
            elif name != program:
                pending.append(child)
    return total


def has_environment(pid, entry):
    """True if `entry` ("NAME=VALUE") is in the environment of `pid` (False if it is gone)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return entry.encode() in environ.read().split(b"\0")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False


def job_processes(mpirun, program, daemons_marker=None):
    """{pid: (role, CPU seconds)} of an mpirun job of one master running `program` that spawns
    workers (the same program) with task processes (their children): the master is the oldest
    `program` under a launcher, the workers the others there, the task processes every process
    under a worker; the launchers fiberrun (and its rank supervisor), mpirun and its node daemons
    (orted). `mpirun` is the launcher's pid: mpirun's, or fiberrun's. daemons_marker: an entry
    "NAME=VALUE" of the job's environment by which its node daemons are found when they have
    left mpirun's tree (mpirun's rsh launcher started the simulated nodes' daemons here with
    `--daemonize`: they were children of init, not of the fake ssh's shells)."""
    processes = machine_processes()
    tree = children_by_parent(processes)
    daemonized = [pid for pid, (name, _, _, _) in processes.items()
                  if daemons_marker and name == "orted" and has_environment(pid, daemons_marker)]
    roles, launchers, pending = {}, set(), [mpirun] + daemonized
    while pending:  # mpirun, and the node daemons under the fake ssh's shells
        pid = pending.pop()
        if pid in processes and processes[pid][0] in LAUNCHERS and pid not in launchers:
            launchers.add(pid)
            roles[pid] = ("launchers", processes[pid][2])
        pending += [child for child, name in tree.get(pid, []) if name != program]
    ranks = sorted((processes[child][3], child) for launcher in launchers
                   for child, name in tree.get(launcher, []) if name == program)
    for index, (_, rank) in enumerate(ranks):
        roles[rank] = ("master" if index == 0 else "workers", processes[rank][2])
        below = [child for child, _ in tree.get(rank, [])] if index > 0 else []
        while below:
            pid = below.pop()
            roles[pid] = ("task_processes", processes[pid][2])
            below += [child for child, _ in tree.get(pid, [])]
    return roles


def machine_busy_seconds():
    """CPU seconds the machine's processors were busy (every state but idle and iowait), summed
    over them, since boot (/proc/stat)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLOCK_TICKS


class JobSampler:
    """Samples job_processes and machine_busy_seconds every `interval` seconds in a thread, so
    that the CPU of each role within any window of the run can be read afterwards (interpolated
    linearly between the samples around the window's ends). A process that ended keeps the CPU
    it had at its last sample."""

    def __init__(self, mpirun, program, interval):
        self.mpirun, self.program, self.interval = mpirun, program, interval
        self.samples = []  # (time.monotonic(), {role: seconds, "machine": seconds})
        self.seen = {}  # {pid: (role, CPU seconds)} of every process of the job seen
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            self.seen.update(job_processes(self.mpirun, self.program))
            totals = dict.fromkeys(ROLES, 0.0)
            for role, seconds in self.seen.values():
                totals[role] += seconds
            totals["machine"] = machine_busy_seconds()
            self.samples.append((time.monotonic(), totals))
            if self.stopped.wait(self.interval):
                return

    def stop(self):
        self.stopped.set()
        self.thread.join()

    def at(self, moment):
        """{role: CPU seconds} at `moment` (time.monotonic()), interpolated."""
        samples = self.samples
        after = next((i for i, (when, _) in enumerate(samples) if when >= moment), len(samples) - 1)
        before = max(after - 1, 0)
        (t0, a), (t1, b) = samples[before], samples[after]
        share = 0.0 if t1 <= t0 else min(max((moment - t0) / (t1 - t0), 0.0), 1.0)
        return {role: a[role] + share * (b[role] - a[role]) for role in a}

    def between(self, start, end):
        """{role: CPU seconds} used from `start` to `end`."""
        first, last = self.at(start), self.at(end)
        return {role: last[role] - first[role] for role in first}
