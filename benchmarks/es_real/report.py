#!/usr/bin/python3
"""The ES scaling report, run for real: fiber-es at the paper's population (1,024 tasks of 0.92 s
per generation) on 32 to 1,024 workers of simulated nodes (es_real.py), seconds per generation
against the ideal and beside the paper's Fiber and IPyParallel times, where each generation's CPU
went, and the run with workers killed.

    /usr/bin/python3 report.py es_real.csv [--markdown PATH] [--page PATH] [--plot PATH]

Per worker count: the median of the generations after the first (a warm-up) and before the
kills' and the PSS reading's (which costs CPU: the generation whose row has the PSS and those
after it; without a PSS row, the last). The ideal: ceil(1,024 / n) x 0.92 s, the tasks back to
back on each worker and nothing else. Two ways to take this machine's share out (all n workers,
their task processes, the node daemons and the master share its cores, where the paper's cluster
gave each worker a core):

    T'(n)  = T(n) - W(n) + ceil(1,024 / n) (s + c),   c = C_tasks / 1,024

    T_c(n) = ceil(1,024 / n) (s + c) + M(n)

T(n): the generation as measured; W(n): the busiest worker's tasks' own seconds (wall, in
fiber-es's rollout log), stretched here by the cores' sharing, replaced by what they take on a
core of their own: s the sleep per task, c the CPU of a task in its task process (the simulator
and the policy; C_tasks: the task processes' CPU over the generation, /proc). T' keeps the time
outside the busiest worker's tasks as measured here (the broadcast, the dispatch, the results
and the gradient's reductions, themselves slowed by the shared cores): an upper bound. T_c counts
the master's work M(n) (its CPU over the generation less its polls that found nothing) as serial
and everything else as on a core of its own: what a cluster of a core per worker would take if
the messages cost nothing but the master's CPU. The busy share: the machine's busy CPU
(/proc/stat, every process) over cores x T(n); near 100 %, the generation waited for the cores.
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import es_paper  # noqa: E402
import report_support  # noqa: E402

FIELDS = ("kind", "workers", "nodes", "slots", "generation", "start_seconds", "wall_seconds",
          "step_sleep_us", "tasks", "distinct_tasks", "task_seconds_median",
          "busiest_worker_task_seconds", "task_seconds_total", "pool_size", "master_cpu",
          "master_idle_poll", "worker_cpu", "worker_cpu_median", "worker_cpu_max", "task_cpu",
          "launcher_cpu", "machine_cpu", "pss_processes", "pss_worker_bytes", "pss_task_bytes",
          "kills", "workers_lost", "workers_new", "exit_status", "cores")
MEDIANS = ("wall_seconds", "task_seconds_median", "busiest_worker_task_seconds",
           "task_seconds_total", "master_cpu", "master_idle_poll", "worker_cpu",
           "worker_cpu_median", "worker_cpu_max", "task_cpu", "launcher_cpu", "machine_cpu")
STEPS_PER_TASK = 400  # es_real.py's: 2 episodes of Pendulum-v1's 200 steps
# The targets at the largest count.
MEASURED_TARGET = 1.5  # T / ideal, as measured on these cores
SHARE_OUT_TARGET = 1.15  # T' / ideal
WORKER_CPU_TARGET = 0.01  # of a core, a worker while its task runs
PSS_TARGET_MIB = 15  # per worker, its task process included
MIB = 2 ** 20


class Count:
    """fiber's run at one worker count: the medians of its timed generations (after the first,
    before any kills and the PSS reading's), its kills' generation and those after."""

    def __init__(self, rows):
        rows = sorted(rows, key=lambda r: int(r["generation"]))
        first = rows[0]
        kills = [i for i, r in enumerate(rows) if int(r["kills"]) > 0]
        self.after_kills = rows[kills[0]:] if kills else []
        self.workers, self.nodes = int(first["workers"]), int(first["nodes"])
        self.slots, self.cores = int(first["slots"]), int(first["cores"])
        self.start = float(first["start_seconds"])
        self.sleep = int(first["step_sleep_us"]) * 1e-6 * STEPS_PER_TASK
        self.status = first["exit_status"]
        pss_rows = [i for i, r in enumerate(rows) if r["pss_processes"]]
        timed = rows[1:min(kills[:1] + pss_rows[:1] + [len(rows) - 1])]
        self.lost = sum(int(r["workers_lost"]) for r in rows[:len(timed) + 1])
        if not timed:
            raise ValueError(f"{self.workers} workers: no generation between the first and the "
                             "last")
        self.m = {key: statistics.median(float(r[key]) for r in timed) for key in MEDIANS}
        self.timed = len(timed)
        self.exact = all(int(r["tasks"]) == int(r["distinct_tasks"]) == es_paper.TASKS
                         for r in rows)
        # PSS per worker in MiB: (the worker's, its task process's).
        self.pss_parts = (math.nan, math.nan)
        for r in rows:
            if r["pss_processes"]:
                self.pss_parts = tuple(int(r[key]) / int(r["pss_processes"]) / MIB
                                       for key in ("pss_worker_bytes", "pss_task_bytes"))
        self.pss_per_worker = sum(self.pss_parts)

    @property
    def ideal(self):
        return es_paper.ideal_generation_seconds(self.workers)

    def own_core_tasks(self):
        """The busiest worker's tasks on a core of their own: ceil(1,024 / n) (s + c)."""
        task_cpu = self.m["task_cpu"] / es_paper.TASKS
        return math.ceil(es_paper.TASKS / self.workers) * (self.sleep + task_cpu)

    def share_out(self):
        """T'(n)."""
        m = self.m
        return m["wall_seconds"] - m["busiest_worker_task_seconds"] + self.own_core_tasks()

    def cluster(self):
        """T_c(n)."""
        return self.own_core_tasks() + self.m["master_cpu"] - self.m["master_idle_poll"]

    def worker_cpu_while_running(self):
        """A worker's CPU per second of its tasks' running (share of a core): the median worker's
        CPU over the generation against a worker's mean task seconds (all its CPU, its share of
        the broadcast and the reductions too, counted against the time its tasks ran)."""
        return self.m["worker_cpu_median"] / (self.m["task_seconds_total"] / self.workers)

    def workers_cpu_while_running(self):
        """All workers' CPU per second of their tasks' running (the relays' included)."""
        return self.m["worker_cpu"] / self.m["task_seconds_total"]


def load(path):
    """({workers: Count} of fiber's runs, {(peer, workers): median seconds per generation, the
    first left out}, {peer: PSS per worker in MiB, its largest run's})."""
    grouped = {}
    for row in report_support.read_csv(path, FIELDS):
        grouped.setdefault((row["kind"], int(row["workers"])), []).append(row)
    runs, peers, peer_memory = {}, {}, {}
    for (kind, workers), rows in sorted(grouped.items()):
        if kind != "fiber":
            timed = [float(r["wall_seconds"]) for r in rows if int(r["generation"]) > 0]
            if timed:
                peers[(kind, workers)] = statistics.median(timed)
            for r in rows:
                if r["pss_processes"]:
                    peer_memory[kind] = int(r["pss_worker_bytes"]) / int(r["pss_processes"]) / MIB
            continue
        try:
            runs[workers] = Count(rows)
        except ValueError as error:
            print(f"report.py: left out: {error}", file=sys.stderr)
    return runs, peers, peer_memory


def paper_cell(seconds, failed):
    if seconds is None:
        return "failed" if failed else "-"
    return f"{seconds:.2f}"


def peer_cell(peers, ends, framework, workers):
    """A peer's seconds per generation here, or why there are none."""
    if (framework, workers) in peers:
        return f"{peers[(framework, workers)]:.2f}"
    return ends.get(framework, "not run")


def peers_text(peers, memory, largest):
    """What the peers' columns hold, and why the counts beyond theirs were not run."""
    if not peers:
        return "The peers were not run (a full run of scripts/bench.sh runs them)."
    ran = max(n for _, n in peers)
    sizes = "".join(f", {name} {mib:.0f} MiB ({mib * largest / 1024:.1f} GiB at {largest:,})"
                    for name, mib in sorted(memory.items()))
    return ("The peers here: the same generation on one node (their tasks sleep as fiber's, "
            f"without the simulator), up to {ran} workers. Beyond, not run: a peer's worker is a "
            "whole Python interpreter (PSS per worker, its controller or MPI daemon included"
            f"{sizes}), beside fiber's run on the same 2 cores and 23 GB.")


def times_table(runs, peers, ends):
    lines = []
    for n, c in sorted(runs.items()):
        fiber, ipp = es_paper.paper_generation_seconds(n)
        lines.append([f"{n:,}", f"1 + {c.nodes - 1} x {min(c.slots, n)}", f"{c.start:.0f}",
                      f"{c.m['task_seconds_median']:.3f}", f"{c.ideal:.2f}",
                      f"{c.m['wall_seconds']:.2f}", f"{c.m['wall_seconds'] / c.ideal:.2f}",
                      f"{c.share_out():.2f}", f"{c.share_out() / c.ideal:.2f}",
                      f"{c.cluster():.2f}", f"{c.cluster() / c.ideal:.2f}",
                      f"{100 * c.m['machine_cpu'] / (c.cores * c.m['wall_seconds']):.0f} %",
                      "-" if math.isnan(c.pss_per_worker) else f"{c.pss_per_worker:.1f}",
                      paper_cell(fiber, False), paper_cell(ipp, n in es_paper.TIMES),
                      peer_cell(peers, ends, "ipyparallel", n),
                      peer_cell(peers, ends, "mpi4py.futures", n), str(c.lost)])
    return report_support.markdown(
        ["workers", "nodes x slots (the master's 1 +)", "start s", "task s (median)", "ideal s",
         "T s", "T / ideal", "T' s", "T' / ideal", "T_c s", "T_c / ideal", "busy share",
         "PSS MiB / worker", "paper: Fiber s", "paper: IPyParallel s", "here: IPyParallel s",
         "here: mpi4py.futures s", "workers lost"],
        lines, right_aligned=range(18))


def cpu_table(runs):
    lines = []
    for n, c in sorted(runs.items()):
        m = c.m
        job = m["master_cpu"] + m["worker_cpu"] + m["task_cpu"] + m["launcher_cpu"]
        lines.append([f"{n:,}", f"{m['wall_seconds']:.2f}", f"{c.cores * m['wall_seconds']:.2f}",
                      f"{m['master_cpu']:.2f}", f"{m['master_idle_poll']:.2f}",
                      f"{m['worker_cpu']:.2f}", f"{m['task_cpu']:.2f}",
                      f"{1e3 * m['task_cpu'] / es_paper.TASKS:.1f}", f"{m['launcher_cpu']:.2f}",
                      f"{m['machine_cpu'] - job:.2f}", f"{m['machine_cpu']:.2f}",
                      f"{100 * c.worker_cpu_while_running():.2f} %",
                      f"{100 * c.workers_cpu_while_running():.2f} %",
                      f"{100 * m['worker_cpu_max'] / m['wall_seconds']:.1f} %"])
    return report_support.markdown(
        ["workers", "T s", "cores x T", "master", "of which idle polls", "workers",
         "task processes", "ms per task", "fiberrun, mpirun, orted", "everything else",
         "machine busy", "median worker per task second", "all workers per task second",
         "busiest worker / T"],
        lines, right_aligned=range(14))


def fault_text(runs):
    out = []
    for n, c in sorted(runs.items()):
        if not c.after_kills:
            continue
        hit, rows = c.after_kills[0], c.after_kills
        exact = all(int(r["tasks"]) == int(r["distinct_tasks"]) == es_paper.TASKS for r in rows)
        seconds = float(hit["wall_seconds"])
        out.append(
            f"- {n:,} workers, {hit['kills']} workers SIGKILLed at random moments of generation "
            f"{hit['generation']} (after the timed ones): that generation took {seconds:.2f} s, "
            f"{seconds / c.ideal:.2f}x its ideal and {seconds / c.m['wall_seconds']:.2f}x the "
            f"generations without kills; from it on, each generation's {es_paper.TASKS:,} results "
            f"{'each exactly once' if exact else 'NOT each exactly once'} in fiber-es's rollout "
            f"log (rows {', '.join(r['tasks'] for r in rows)}; distinct tasks "
            f"{', '.join(r['distinct_tasks'] for r in rows)}); workers taken for lost "
            f"{sum(int(r['workers_lost']) for r in rows)}, new worker processes by the run's end "
            f"{hit['workers_new']}; the pool's size by generation "
            f"{', '.join(r['pool_size'] for r in rows)}; the next generations took "
            f"{', '.join(r['wall_seconds'] for r in rows[1:])} s.")
    return "\n".join(out) + "\n" if out else ""


def pss_text(runs):
    """The PSS target's line: at the largest count with a reading."""
    measured = [n for n, c in runs.items() if not math.isnan(c.pss_per_worker)]
    if not measured:
        return "- PSS per worker: no reading."
    c = runs[max(measured)]
    missing = (f" (no reading at {max(runs):,}: see the notes of the page)"
               if max(measured) != max(runs) else "")
    return (f"- PSS per worker with its task process at {c.workers:,} workers{missing}: "
            f"{c.pss_per_worker:.1f} MiB ({c.pss_parts[0]:.1f} the worker, {c.pss_parts[1]:.1f} "
            f"its task process; target {PSS_TARGET_MIB} MiB): "
            f"{'met' if c.pss_per_worker <= PSS_TARGET_MIB else 'NOT met'}.")


def targets_text(runs):
    largest = runs[max(runs)]
    n = largest.workers
    measured = largest.m["wall_seconds"] / largest.ideal
    shared = largest.share_out() / largest.ideal
    worker = largest.workers_cpu_while_running()  # the mean: the median is a tick or none
    lost = sum(c.lost for c in runs.values())  # before any kills

    def verdict(ok):
        return "met" if ok else "NOT met"

    lines = [
        f"- A generation at {n:,} workers within {MEASURED_TARGET}x of its ideal as measured on "
        f"these {largest.cores} cores: {measured:.2f}x: {verdict(measured <= MEASURED_TARGET)}.",
        f"- Within {SHARE_OUT_TARGET}x once the machine's share is taken out (T'): {shared:.2f}x: "
        f"{verdict(shared <= SHARE_OUT_TARGET)} (T_c: "
        f"{largest.cluster() / largest.ideal:.2f}x).",
        f"- Workers lost before any kills: {lost}: {verdict(lost == 0)}.",
        pss_text(runs),
        f"- A worker whose task runs, on a remote node: {100 * worker:.2f} % of a core (all "
        "workers' CPU over the generation, the relays' and reductions' included, per second of "
        f"their tasks; the median worker's: {100 * largest.worker_cpu_while_running():.2f} %, in "
        f"10 ms ticks; target {100 * WORKER_CPU_TARGET:g} %): "
        f"{verdict(worker <= WORKER_CPU_TARGET)}."]
    if n != es_paper.TASKS:
        lines.insert(0, f"- (The issue states them at {es_paper.TASKS:,} workers; the largest "
                        f"count run here is {n:,}.)")
    notes = [f"- {n:,} workers: every generation ran, but fiberrun exited with status "
             f"{c.status} (the job's end was cut: its grace after the master's end)"
             for n, c in sorted(runs.items()) if c.status != "0"]
    notes += [f"- {n:,} workers: a generation's results not each exactly once"
              for n, c in sorted(runs.items()) if not c.exact]
    return "\n".join(lines + notes) + "\n"


def plot(path, runs, peers):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (times, cpu) = plt.subplots(1, 2, figsize=(13, 5))
    counts = sorted(runs)
    times.loglog(counts, [runs[n].m["wall_seconds"] for n in counts], "o-",
                 label="fiber, measured here (2 shared cores)")
    times.loglog(counts, [runs[n].share_out() for n in counts], "s--",
                 label="fiber, T' (this machine's share out)")
    times.loglog(counts, [runs[n].ideal for n in counts], ":", color="grey",
                 label="ideal (the tasks only)")
    paper = sorted(es_paper.TIMES)
    times.loglog(paper, [es_paper.paper_generation_seconds(n)[0] for n in paper], "ko-",
                 label="paper: Fiber")
    ipp = [n for n in paper if es_paper.paper_generation_seconds(n)[1]]
    times.loglog(ipp, [es_paper.paper_generation_seconds(n)[1] for n in ipp], "kx--",
                 label="paper: IPyParallel")
    for (framework, style) in (("ipyparallel", "v-"), ("mpi4py.futures", "^-")):
        mine = sorted(n for f, n in peers if f == framework)
        if mine:
            times.loglog(mine, [peers[(framework, n)] for n in mine], style,
                         label=f"{framework}, measured here (one node)")
    times.set_xticks(counts, [f"{n:,}" for n in counts])
    times.minorticks_off()
    times.set_xlabel("workers")
    times.set_ylabel("seconds per generation (1,024 tasks of 0.92 s)")
    times.set_title("ES at the paper's population, run for real")
    times.legend(fontsize=8)
    parts = (("master_cpu", "master"), ("worker_cpu", "workers"),
             ("task_cpu", "task processes"), ("launcher_cpu", "fiberrun, mpirun, orted"))
    bottom = [0.0] * len(counts)
    x = range(len(counts))
    for key, name in parts:
        values = [runs[n].m[key] for n in counts]
        cpu.bar(x, values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    rest = [runs[n].m["machine_cpu"] - b for n, b in zip(counts, bottom)]
    cpu.bar(x, rest, bottom=bottom, label="everything else")
    cpu.plot(x, [runs[n].cores * runs[n].m["wall_seconds"] for n in counts], "k_", markersize=20,
             label="cores x T")
    cpu.set_xticks(list(x), [f"{n:,}" for n in counts])
    cpu.set_xlabel("workers")
    cpu.set_ylabel("CPU seconds per generation")
    cpu.set_title("where a generation's CPU went (/proc)")
    cpu.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0], peers=True)
    runs, peers, peer_memory = load(args.csv)
    ends, notes = report_support.peer_ends(args.peer_states)
    if not runs:
        sys.exit("report.py: no complete run in " + args.csv)
    any_run = next(iter(runs.values()))
    text = (
        f"fiber-es, population {2 * es_paper.TASKS:,} ({es_paper.TASKS:,} tasks of one antithetic "
        f"pair: Pendulum-v1, 2 x 200 steps, {any_run.sleep:.3f} s slept, the paper's "
        f"{es_paper.TAU:.2f} s), on simulated nodes of this {any_run.cores}-core machine: the "
        "master alone on one, the workers on the others (all remote). Per worker count the "
        f"median of {any_run.timed} generation(s) (the first left out, and the kills' and the PSS "
        "reading's); start: from "
        "the launch to the pool's ready line; the paper's times per generation (its 50 "
        "iterations / 50); T', T_c and the busy share: the method above the table in "
        "benchmarks/es_real/report.py. " + peers_text(peers, peer_memory, max(runs)) + "\n\n"
        + times_table(runs, peers, ends)
        + "\nWhere each generation's CPU went (seconds, median; /proc, in ticks of 10 ms, the "
        "master's idle polls from the PMPI counters; everything else: the machine's busy time "
        "less the job's, other jobs and the measuring script included, to within the readings' "
        "skew of a few tenths of a second, which can make it negative; per task second: the "
        "median worker's CPU over the generation against a worker's mean task seconds (below "
        "a tick, 10 ms, it reads 0), and all workers' against all tasks' seconds; every worker "
        "is on a node other than the master's):\n\n" + cpu_table(runs))
    killed = fault_text(runs)
    if killed:
        text += "\nWorkers killed:\n\n" + killed
    if notes:
        text += "\nPeers:\n\n" + "".join(f"- {note}\n" for note in notes)
    text += "\nThe issue's targets:\n\n" + targets_text(runs)
    print(text)
    report_support.publish(args, "ES scaling, run for real", "es real", text)
    if args.plot:
        plot(args.plot, runs, peers)


if __name__ == "__main__":
    main()
