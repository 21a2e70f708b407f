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


def median(rows, key):
    return statistics.median(float(r[key]) for r in rows)


def load(path):
    """Runs {(workers, nodes): figures} and updates {samples: (update, gemm)}."""
    rows = report_support.read_csv(path, FIELDS)
    runs, updates = {}, {}
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
    return runs, updates


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
    runs, updates = load(args.csv)
    if not runs or not updates:
        sys.exit("report: no runs or no updates in " + args.csv)
    nodes = max(k for _, k in runs)
    model = Model(runs, updates, nodes)
    text = tables(runs, updates, model)
    print(text)
    report_support.publish(args, "PPO scaling: the paper's comparison replayed", "ppo_scaling",
                           text)
    if args.plot:
        plot(args.plot, runs, updates, model)


if __name__ == "__main__":
    main()
