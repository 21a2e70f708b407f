#!/usr/bin/python3
"""The PPO scaling report: fiber-ppo's iteration split into rollout and update on a
simulation-heavy workload (ppo_scaling.py), the update against the GEMM floor of its shapes, and
the Fiber paper's PPO comparison stated as ours: N workers against an 8-worker pool on one node,
on the same iteration (K slots of S steps), projected to K = 256 workers.

    /usr/bin/python3 report.py ppo_scaling.csv [--markdown PATH] [--page PATH] [--plot PATH]

Per run: the median over its iterations, the first (warm-up) left out. A segment task's own time
is in the tasks log; the rollout's overhead = the rollout's wall time - its longest task (the
broadcast, dispatch and gathering, and the 2 shared cores' contention). The projection of one
iteration of K slots x S steps on n workers:

    T(n) = ceil(K / n) S c + o(n) + u(K S)

c: a step's cost in a worker alone (sleep and simulation: the 1-worker run's task time / S, so
that the 2 cores shared by 64 workers do not count, as on a cluster of a core per worker);
o(n): the rollout's overhead, measured for the runs' n, beyond them fitted as a + b n (least
squares over the runs on 4 nodes), counted serial (none overlapped with the tasks: an upper
bound); the dispatch of the ceil(K / n) - 1 further tasks per worker not counted (fiber's per-task
cost is microseconds, a segment's a third of a second); u: the update alone (ppo_update, CPU) at
K S samples, the same for every n, serial on the master (none overlapped with the rollout).
Target: T(256) < T(8 on one node) / 2.

The replay (the runs of kind "replay", if any): the same iteration of K slots run for real on the
8 workers of one node and on N workers of simulated nodes, all on this machine's cores. Measured:
T(N) = the rollout + the update, wall, as in the run log. The master's update in the run against
the update alone: its CPU (the master's from /proc over the update; fiber's doing if it is more)
and its wall (what else took the cores meanwhile: the job's other processes, and the machine's
busy time from /proc/stat, other jobs' included). With the simulators' CPU taken out: the cores
are shared by the N simulators here, where the paper's cluster gave each its own, so the rollout
is counted as on a core per worker:

    R'(N) = R(N) - W(N) + ceil(K / N) S (s + c_sim),   c_sim = C_tasks / (K S)

W(N): the busiest worker's segments' own seconds (wall, in the tasks log), replaced by what they
take on a core of their own: s the sleep per step, c_sim the CPU of a step in the task processes
(the simulator and the policy: their CPU over the rollout from /proc, C_tasks, per step); R - W:
the rollout's time outside the segments (broadcast, dispatch, gathering) as measured here, upper
bound; T'(N) = R'(N) + the master's CPU over the update in the run (the update on a core of its
own: the other jobs of this machine took the cores at times).
"""

import math
import os
import statistics
import sys

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("kind", "workers", "nodes", "iteration", "samples", "step_sleep_us", "rollout_seconds",
          "update_seconds", "task_seconds_max", "task_seconds_mean", "gemm_seconds")
BASELINE_WORKERS = 8  # the paper's multiprocessing pool on one machine
TARGET_RATIO = 0.5    # T(256) under half the baseline's
UPDATE_FLOOR_TARGET = 3.0  # the update within 3x of its GEMMs
UPDATE_IN_RUN_TARGET = 1.1  # the master's update in the largest replay within 1.1x of it alone
REPLAY_FIELDS = ("slots", "worker_task_seconds_max", "rollout_task_cpu", "rollout_worker_cpu",
                 "rollout_launcher_cpu", "rollout_master_cpu", "update_master_cpu",
                 "update_others_cpu", "update_machine_cpu")


def median(rows, key):
    return statistics.median(float(r[key]) for r in rows)


def load(path):
    """Runs {(workers, nodes): figures} and updates {samples: (update, gemm)}."""
    rows = report_support.read_csv(path, FIELDS)
    runs, updates, replays = {}, {}, {}
    if any(r["kind"] == "replay" for r in rows):
        rows = report_support.read_csv(path, FIELDS + REPLAY_FIELDS)
    for key in sorted({(int(r["workers"]), int(r["nodes"])) for r in rows if r["kind"] == "run"}):
        mine = [r for r in rows if r["kind"] == "run" and (int(r["workers"]), int(r["nodes"])) == key
                and int(r["iteration"]) > 0]
        if not mine:
            sys.exit(f"report: the run of {key[0]} workers on {key[1]} nodes has no iteration "
                     "after the first")
        runs[key] = {
            "samples": int(mine[0]["samples"]), "sleep_us": int(mine[0]["step_sleep_us"]),
            "rollout": median(mine, "rollout_seconds"), "update": median(mine, "update_seconds"),
            "task_max": median(mine, "task_seconds_max"),
            "task_mean": median(mine, "task_seconds_mean"),
            "overhead": statistics.median(float(r["rollout_seconds"]) - float(r["task_seconds_max"])
                                          for r in mine)}
    for r in rows:
        if r["kind"] == "update":
            updates[int(r["samples"])] = (float(r["update_seconds"]), float(r["gemm_seconds"]))
    for key in sorted({(int(r["workers"]), int(r["nodes"])) for r in rows
                       if r["kind"] == "replay"}):
        mine = [r for r in rows if r["kind"] == "replay" and int(r["iteration"]) > 0
                and (int(r["workers"]), int(r["nodes"])) == key]
        if not mine:
            sys.exit(f"report: the replay of {key[0]} workers on {key[1]} nodes has no iteration "
                     "after the first")
        replays[key] = {"samples": int(mine[0]["samples"]), "slots": int(mine[0]["slots"]),
                        "sleep_us": int(mine[0]["step_sleep_us"]),
                        "rollout": median(mine, "rollout_seconds"),
                        "update": median(mine, "update_seconds"),
                        "iteration": statistics.median(float(r["rollout_seconds"])
                                                       + float(r["update_seconds"]) for r in mine)}
        replays[key].update({field: median(mine, field) for field in REPLAY_FIELDS[1:]})
    return runs, updates, replays


class Model:
    """The projection's parts, from the runs and the updates measured alone."""

    def __init__(self, runs, updates, nodes):
        spread = {w: f for (w, k), f in runs.items() if k == nodes}
        if 1 not in spread or (BASELINE_WORKERS, 1) not in runs or len(spread) < 2:
            sys.exit("report: needs the 1-worker run, another on the same nodes and the "
                     f"{BASELINE_WORKERS}-worker run on one node")
        self.spread = spread
        self.steps = spread[1]["samples"]
        self.sleep_us = spread[1]["sleep_us"]
        self.step_seconds = spread[1]["task_mean"] / self.steps
        workers = numpy.array(sorted(spread), dtype=float)
        overheads = numpy.array([spread[int(w)]["overhead"] for w in workers])
        self.slope, self.intercept = numpy.polyfit(workers, overheads, 1)
        self.baseline = runs[(BASELINE_WORKERS, 1)]
        self.slots = max(updates)  // self.steps
        self.update_seconds = updates[max(updates)][0]

    def overhead(self, workers):
        if workers in self.spread:
            return self.spread[workers]["overhead"]
        return self.intercept + self.slope * workers

    def iteration(self, workers, overhead=None):
        """T(workers) for the K-slot iteration."""
        rollout = math.ceil(self.slots / workers) * self.steps * self.step_seconds
        return rollout + (self.overhead(workers) if overhead is None else overhead) + \
            self.update_seconds

    def baseline_iteration(self):
        return self.iteration(BASELINE_WORKERS, self.baseline["overhead"])


def tables(runs, updates, model):
    measured = []
    for (workers, nodes), f in sorted(runs.items(), key=lambda item: (item[0][1] == 1, item[0])):
        alone, gemm = updates.get(f["samples"], (math.nan, math.nan))
        measured.append([str(workers), str(nodes), f"{f['samples']:,}", f"{f['rollout']:.3f}",
                         f"{f['task_max']:.3f}", f"{f['overhead']:.3f}", f"{f['update']:.3f}",
                         f"{alone:.3f}", f"{gemm:.3f}", f"{alone / gemm:.2f}",
                         f"{100 * f['rollout'] / (f['rollout'] + f['update']):.0f} %"])
    text = report_support.markdown(
        ["workers", "nodes", "samples/iter", "rollout s", "longest task s", "rollout overhead s",
         "update s (log)", "update alone s", "GEMM floor s", "update / floor", "rollout share"],
        measured, right_aligned=range(11))
    base = model.baseline_iteration()
    compared = [[f"{BASELINE_WORKERS} (1 node, the baseline)", f"{base:.2f}", "1.00", "measured o"]]
    for workers in sorted(set(model.spread) | {model.slots}):
        if workers < BASELINE_WORKERS:
            continue
        kind = "measured o" if workers in model.spread else "fitted o"
        t = model.iteration(workers)
        compared.append([str(workers), f"{t:.2f}", f"{t / base:.2f}", kind])
    projected = model.iteration(model.slots)
    ratio = projected / base
    passed = "met" if ratio < TARGET_RATIO else "NOT met"
    largest = max(updates)
    floor_ratio = updates[largest][0] / updates[largest][1]
    text += (
        f"\nThe paper's comparison as ours: one iteration of {model.slots} slots x "
        f"{model.steps} steps ({model.slots * model.steps:,} samples, humanoid.toml's update: "
        f"{model.update_seconds:.2f} s alone), on N workers against {BASELINE_WORKERS} workers "
        f"on one node. A step costs c = {1e3 * model.step_seconds:.2f} ms in a worker "
        f"({model.sleep_us / 1e3:g} ms slept, the rest Humanoid-v5 and the policy); the "
        f"rollout's overhead o(n) = {model.intercept:.3f} s + {1e3 * model.slope:.2f} ms x n "
        f"beyond the runs.\n\n")
    text += report_support.markdown(["N workers", "T(N) s per iteration",
                                     f"against {BASELINE_WORKERS} on one node", "overhead"],
                                    compared, right_aligned=(1, 2))
    text += (f"\nTarget: T({model.slots}) < {TARGET_RATIO:g} x T({BASELINE_WORKERS}, one node): "
             f"{projected:.2f} s against {base:.2f} s, ratio {ratio:.2f}: {passed}. "
             f"The update alone at {largest:,} samples: {updates[largest][0]:.2f} s CPU, "
             f"{floor_ratio:.2f}x its GEMM floor ({updates[largest][1]:.2f} s; target "
             f"{UPDATE_FLOOR_TARGET:g}x: {'met' if floor_ratio < UPDATE_FLOOR_TARGET else 'NOT met'})"
             ".\n")
    return text


def on_own_cores(f, steps):
    """T'(N): the iteration with each worker's segments, and the master's update, at their cost
    on a core of their own."""
    step_cpu = f["rollout_task_cpu"] / f["samples"]
    own = math.ceil(f["slots"] / f["workers"]) * steps * (f["sleep_us"] * 1e-6 + step_cpu)
    return f["rollout"] - f["worker_task_seconds_max"] + own + f["update_master_cpu"]


def replay_tables(replays, updates, steps):
    """The replay's tables: measured, the CPU in each phase, and the two targets."""
    for (workers, _), f in replays.items():
        f["workers"] = workers
    baseline = replays.get((BASELINE_WORKERS, 1))
    if baseline is None:
        sys.exit(f"report: the replay has no run of {BASELINE_WORKERS} workers on one node")
    alone = updates.get(baseline["samples"], (math.nan,))[0]
    base_own = on_own_cores(baseline, steps)
    measured, accounting = [], []
    for (workers, nodes), f in sorted(replays.items(),
                                      key=lambda item: (item[0][1] != 1, item[0])):
        own = on_own_cores(f, steps)
        measured.append([str(workers), str(nodes), f"{f['rollout']:.2f}", f"{f['update']:.2f}",
                         f"{f['iteration']:.2f}", f"{f['iteration'] / baseline['iteration']:.2f}",
                         f"{own:.2f}", f"{own / base_own:.2f}"])
        others = f["update_machine_cpu"] - f["update_master_cpu"]
        accounting.append([str(workers), f"{f['rollout_task_cpu']:.2f}",
                           f"{1e3 * f['rollout_task_cpu'] / f['samples']:.3f}",
                           f"{f['rollout_worker_cpu']:.2f}", f"{f['rollout_launcher_cpu']:.2f}",
                           f"{f['rollout_master_cpu']:.2f}", f"{f['update_master_cpu']:.2f}",
                           f"{f['update_master_cpu'] / alone:.2f}", f"{f['update'] / alone:.2f}",
                           f"{f['update_others_cpu']:.2f}", f"{others:.2f}"])
    text = (f"\nThe replay, run for real: one iteration of {baseline['slots']} slots x {steps} "
            f"steps ({baseline['samples']:,} samples) on {BASELINE_WORKERS} workers of one node "
            "and on N workers of simulated nodes, all on this machine's cores; the median of the "
            "iterations after the first. T' counts the rollout as on a core per worker (the "
            "simulators' CPU taken out of the shared cores: the method above).\n\n")
    text += report_support.markdown(
        ["N workers", "nodes", "rollout s", "update s", "T(N) s", f"against {BASELINE_WORKERS}",
         "T'(N) s, a core per worker", f"against {BASELINE_WORKERS}"],
        measured, right_aligned=range(8))
    text += ("\nWhere the CPU went (seconds, from /proc; the rollout's: the task processes, "
             "that is the simulators and the policy, per step too, the workers, mpirun and the "
             "node daemons, the master; the update's: the master, against the update alone "
             f"({alone:.2f} s CPU, ppo_update), its wall against the same, the job's other "
             "processes, and everything but the master on the machine, other jobs' included):\n\n")
    text += report_support.markdown(
        ["N workers", "rollout: simulators", "ms / step", "workers", "mpirun, orted", "master",
         "update: master", "master / alone", "wall / alone", "job's others", "machine's others"],
        accounting, right_aligned=range(11))
    largest = replays[max(replays, key=lambda key: key[0])]
    ratio = on_own_cores(largest, steps) / base_own
    in_run = largest["update_master_cpu"] / alone
    text += (f"\nTargets: T'({largest['workers']}) < {TARGET_RATIO:g} x T'({BASELINE_WORKERS}, "
             f"one node): ratio {ratio:.2f}: {'met' if ratio < TARGET_RATIO else 'NOT met'} "
             f"(measured T({largest['workers']}) / T({BASELINE_WORKERS}), the simulators on "
             f"these cores: {largest['iteration'] / baseline['iteration']:.2f}). The master's "
             f"update in the {largest['workers']}-worker run within {UPDATE_IN_RUN_TARGET:g}x of "
             f"the update alone: {in_run:.2f}x its CPU: "
             f"{'met' if in_run < UPDATE_IN_RUN_TARGET else 'NOT met'} (its wall "
             f"{largest['update'] / alone:.2f}x; its CPU against the {BASELINE_WORKERS}-worker "
             f"run's update: {largest['update_master_cpu'] / baseline['update_master_cpu']:.2f}x)."
             "\n")
    return text


def plot(path, runs, updates, model):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (measured, projected) = plt.subplots(1, 2, figsize=(13, 5))
    workers = sorted(model.spread)
    measured.plot(workers, [model.spread[w]["rollout"] for w in workers], "o-", label="rollout")
    measured.plot(workers, [model.spread[w]["update"] for w in workers], "s-",
                  label="update (run log)")
    measured.plot(workers, [updates.get(model.spread[w]["samples"], (math.nan,))[0]
                            for w in workers], "^--", label="update alone (ppo_update)")
    measured.plot(workers, [updates.get(model.spread[w]["samples"], (0, math.nan))[1]
                            for w in workers], "v:", label="GEMM floor of the update")
    measured.set_xscale("log", base=2)
    measured.set_yscale("log")
    measured.set_xlabel(f"workers (= slots, {model.steps} steps each) on 4 simulated nodes")
    measured.set_ylabel("seconds per iteration")
    measured.set_title("Measured: the iteration's two phases")
    measured.legend()
    counts = sorted({w for w in workers if w >= BASELINE_WORKERS} | {model.slots})
    base = model.baseline_iteration()
    projected.plot(counts, [model.iteration(w) for w in counts], "o-", label="T(N)")
    projected.axhline(base, color="grey", label=f"{BASELINE_WORKERS} workers on one node")
    projected.axhline(TARGET_RATIO * base, color="grey", linestyle="--", label="half of it")
    projected.set_xscale("log", base=2)
    projected.set_xlabel("N workers")
    projected.set_ylabel(f"seconds per iteration of {model.slots} x {model.steps} steps")
    projected.set_title("The paper's comparison, projected")
    projected.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0])
    runs, updates, replays = load(args.csv)
    if not runs or not updates:
        sys.exit("report: no runs or no updates in " + args.csv)
    nodes = max(k for _, k in runs)
    model = Model(runs, updates, nodes)
    text = tables(runs, updates, model)
    if replays:
        text += replay_tables(replays, updates, model.steps)
    print(text)
    report_support.publish(args, "PPO scaling: the paper's comparison replayed", "ppo_scaling",
                           text)
    if args.plot:
        plot(args.plot, runs, updates, model)


if __name__ == "__main__":
    main()
