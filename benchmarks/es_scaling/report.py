#!/usr/bin/python3
"""The ES scaling report: generation time of fiber-es against the number of workers, the
master's own time, and a model fitted to them that projects the time and the efficiency to 1,024
workers, beside the Fiber paper's figures (benchmarks/README.md explains the model).

    /usr/bin/python3 report.py es_scaling.csv [--markdown PATH] [--readme PATH] [--plot PATH]

Model of one generation with n workers and K tasks of tau seconds each (one antithetic pair):

    T(n) = m + c * n + ceil(K / n) * tau

m: the master's own time (measured: master_seconds); tau: from the 1-worker run,
(T(1) - m - c) / K; c: the cost that grows with the workers (the parameters broadcast to each
worker, twice as many gradient parts as workers, more messages), fitted by least squares to the
measured times. The first generation of each run is left out when there are others (warm-up).
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402

FIELDS = ("workers", "generation", "seconds", "master_seconds", "population")
PROJECTED = (128, 256, 512, 1024)
# The paper's figure (seconds for 50 ES iterations, population 2,048): Fiber, IPyParallel.
PAPER = {32: (1475, 1520), 64: (800, 905), 128: (460, 760), 256: (305, 895), 512: (245, 1370),
         1024: (245, None)}
PAPER_ITERATIONS = 50


def load(path):
    """{workers: (median generation seconds, median master seconds, population)}."""
    runs = {}
    for row in report_support.read_csv(path, FIELDS):
        runs.setdefault(int(row["workers"]), []).append(row)
    measured = {}
    for workers, rows in sorted(runs.items()):
        rows.sort(key=lambda r: int(r["generation"]))
        kept = rows[1:] if len(rows) > 1 else rows
        measured[workers] = (statistics.median(float(r["seconds"]) for r in kept),
                             statistics.median(float(r["master_seconds"]) for r in kept),
                             int(rows[0]["population"]))
    return measured


def fit(measured):
    """(m, c, tau, tasks): the model's parameters from the measurements."""
    tasks = next(iter(measured.values()))[2] // 2
    m = statistics.median(master for _, master, _ in measured.values())
    c, tau = 0.0, 0.0
    for _ in range(20):  # tau and c depend on each other a little; a few rounds settle them
        tau = (measured[min(measured)][0] - m - c * min(measured)) / (
            math.ceil(tasks / min(measured)))
        residual = {n: t - m - math.ceil(tasks / n) * tau for n, (t, _, _) in measured.items()}
        c = max(0.0, sum(r * n for n, r in residual.items()) / sum(n * n for n in residual))
    return m, c, tau, tasks


def model(n, m, c, tau, tasks):
    return m + c * n + math.ceil(tasks / n) * tau


def main():
    args = report_support.arguments(__doc__.splitlines()[0])
    measured = load(args.csv)
    if not measured:
        sys.exit("report.py: no ES scaling rows")
    m, c, tau, tasks = fit(measured)
    one = min(measured)
    base = measured[one][0] * one  # worker-seconds of a generation, from the smallest run

    header = ["workers", "generation s", "master s", "speed-up", "efficiency", "model s"]
    lines = []
    for n, (seconds, master, _) in measured.items():
        lines.append([str(n), f"{seconds:.3f}", f"{master * 1e3:.1f} ms",
                      f"{base / seconds / one:.1f}", f"{base / (n * seconds):.0%}",
                      f"{model(n, m, c, tau, tasks):.3f}"])
    for n in PROJECTED:
        if n not in measured:
            t = model(n, m, c, tau, tasks)
            lines.append([f"{n} (model)", "-", "-", f"{base / t / one:.1f}",
                          f"{base / (n * t):.0%}", f"{t:.3f}"])

    # The paper's episode cost in the same model: its 32-worker time, taken as near-ideal,
    # gives its time per task; our m and c give the rest.
    paper_tau = PAPER[32][0] / PAPER_ITERATIONS * 32 / 1024
    paper_lines = []
    for n, (fiber, ipp) in PAPER.items():
        ours = model(n, m, c, paper_tau, 1024) * PAPER_ITERATIONS
        ideal = math.ceil(1024 / n) * paper_tau * PAPER_ITERATIONS
        paper_lines.append([str(n), f"{fiber:,}", f"{ipp:,}" if ipp else "failed",
                            f"{ours:,.0f}", f"{ideal / ours:.0%}"])

    population = measured[one][2]
    text = (report_support.markdown(header, lines, right_aligned=set(range(1, 6)))
            + f"\nPopulation {population:,} ({tasks:,} tasks of one antithetic pair); "
            f"generation time = median over generations after the first; efficiency = "
            f"{one}-worker time / (workers x time). Model T(n) = m + c n + ceil(K/n) tau with "
            f"m = {m * 1e3:.1f} ms (master), c = {c * 1e6:.0f} us per worker, "
            f"tau = {tau * 1e3:.2f} ms per task, K = {tasks:,}.\n\n"
            + "With the paper's episode cost (its 32-worker time taken as ideal: tau = "
            f"{paper_tau:.2f} s per pair) and these m and c, 50 iterations would take:\n\n"
            + report_support.markdown(
                ["workers", "paper: Fiber s", "paper: IPyParallel s", "model: fiber s",
                 "model efficiency"], paper_lines, right_aligned={1, 2, 3, 4}))
    print(text)
    report_support.publish(args, "ES scaling", "es scaling", text)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, (times, efficiency) = plt.subplots(1, 2, figsize=(12, 4.5))
        counts = sorted(measured)
        extended = sorted(set(counts) | {2 ** k for k in range(0, 11)})
        times.loglog(counts, [measured[n][0] for n in counts], "o", label="measured")
        times.loglog(extended, [model(n, m, c, tau, tasks) for n in extended], "-",
                     label="model")
        times.loglog(counts, [measured[n][1] for n in counts], "s", label="master's own time")
        times.set_xlabel("workers")
        times.set_ylabel("seconds per generation")
        times.set_title(f"fiber-es, population {population:,}")
        times.legend()
        measured_efficiency = [base / (n * measured[n][0]) for n in counts]
        efficiency.semilogx(counts, measured_efficiency, "o", label="measured")
        efficiency.semilogx(extended, [base / (n * model(n, m, c, tau, tasks))
                                       for n in extended], "-", label="model")
        efficiency.set_ylim(0, max(1.1, max(measured_efficiency) + 0.1))
        efficiency.set_xlabel("workers")
        efficiency.set_ylabel("parallel efficiency")
        efficiency.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
