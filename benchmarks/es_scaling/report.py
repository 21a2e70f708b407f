#!/usr/bin/python3
"""The ES scaling report: what fiber-es's master costs per generation (CPU, messages, bytes) and
what starting its pool costs (mpirun, node daemons, master), measured on simulated nodes, and a
projection of the Fiber paper's ES workload from them to 32 .. 4,096 workers.

    /usr/bin/python3 report.py es_scaling.csv [--markdown PATH] [--page PATH] [--plot PATH]

Per generation: the differences between consecutive generations' snapshots, the first
generation (warm-up) left out; counts (messages, bytes) are their mean, the master's work their
smallest (CPU time on a shared machine only gains from noise: the other processes' cache misses
and interrupts). The master's work = its CPU time minus its CPU in polls that found nothing and
minus its CPU inside MPI calls that did something (es_scaling.py): that is the transport's, here
TCP over loopback through the kernel (~10-20 us a message), which the projection replaces by the
stated network's LATENCY per message and bytes / bandwidth. Heartbeats are apart: how many a worker sends follows the tasks' wall time
(one after each HEARTBEAT_SECONDS of silence), which 128 workers on 2 cores stretch far beyond
the cluster's; so the messages in are fitted without them, the work less their share (a heartbeat
taken to cost what the run's average message does), and the projection counts them from the
paper's task time instead: floor(TAU / HEARTBEAT_SECONDS) per task. Each per-generation quantity
X of a policy is fitted as X = a + b n + c k over the runs measured (least squares; n workers on
k nodes). The projection of one generation of the paper's workload (K = 1,024 tasks of one
antithetic pair, TAU seconds each, on n workers, NODE_SIZE workers per node):

    T(n) = ceil(K / n) TAU + work(n) + h (work per message) + (bytes_out(n) + bytes_in(n))
           / bandwidth + (messages_out(n) + messages_in(n) + h) x latency
           + (levels(k) - 1) x RELAY_FANOUT x (8 P / bandwidth + latency),  h = K floor(TAU / HB)

the last term the broadcast's further levels of relays (the master sends its copies to the first
level only; bytes_out counts those).

with every master cost counted as serial (none overlapped with the workers' episodes: an upper
bound). Efficiency = ceil(K / n) TAU / T(n): the share of the time the workers' episodes take
(with K = 1,024 tasks, more than 1,024 workers cannot all be busy, whatever the framework).
"""

import math
import os
import statistics
import sys

import numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report_support  # noqa: E402
# The paper's ES workload (tasks of one antithetic pair, TAU seconds each) and its times.
from es_paper import ITERATIONS as PAPER_ITERATIONS  # noqa: E402
from es_paper import TASKS as PAPER_TASKS  # noqa: E402
from es_paper import TAU as PAPER_TAU  # noqa: E402
from es_paper import TIMES as PAPER  # noqa: E402

FIELDS = ("policy", "parameters", "population", "workers", "nodes", "event", "generation",
          "master_cpu_seconds", "launcher_cpu_seconds", "sent_messages", "sent_bytes",
          "received_messages", "received_bytes", "spawn_calls", "idle_poll_nanoseconds",
          "received_heartbeats", "transport_nanoseconds")
COUNTED = ("master_cpu_seconds", "sent_messages", "sent_bytes", "received_messages",
           "received_bytes", "received_heartbeats")
# What the model fits: the work and the messages in less the heartbeats' share.
FITTED = ("work_seconds", "sent_messages", "sent_bytes", "received_messages", "received_bytes")
BYTES_PER_PARAMETER = 8  # fiber-es sends theta and receives gradients as doubles
PROJECTED = (32, 64, 128, 256, 512, 1024, 2048, 4096)
NODE_SIZE = 32  # workers per node in the projection
NETWORKS = {"100 Gb/s": 100e9 / 8, "10 Gb/s": 10e9 / 8}  # bytes per second
LATENCY = 2e-6  # seconds per message
# The targets.
EFFICIENCY_TARGETS = {"humanoid-167k": 0.90, "humanoid-29k": 0.95}
MAX_COPIES_PER_NODE = 2
MAX_START_SECONDS_PER_WORKER = 0.005
MAX_WORK_PER_MESSAGE_RATIO = 1.5
TARGET_WORKERS = 1024
# fiber's heartbeat: a busy worker sends one after worker_timeout / 8 of silence
# (wire/run_entry.hpp, kHeartbeatsPerWorkerTimeout), 10 s by default (PoolOptions::worker_timeout);
# 16 bytes.
HEARTBEAT_SECONDS = 10.0 / 8
HEARTBEAT_BYTES = 16
# fiber's broadcast (dispatch/broadcast_routes.hpp, kRelayFanout): the master sends the parameters
# to 2 nodes' relays, each relay to 2 more: the copies after the master's cross the tree's further
# levels one level after another, each relay sending its 2 copies in turn.
RELAY_FANOUT = 2


class Run:
    """One fiber-es run: its start and its per-generation figures."""

    def __init__(self, rows):
        ready = [r for r in rows if r["event"] == "ready"]
        generations = sorted((r for r in rows if r["event"] == "generation"),
                             key=lambda r: int(r["generation"]))
        if not ready or len(generations) < 2:
            raise ValueError("a run needs its ready row and at least 2 generations")
        first, last = generations[0], generations[-1]
        self.policy = first["policy"]
        self.parameters = int(first["parameters"])
        self.population = int(first["population"])
        self.workers = int(first["workers"])
        self.nodes = int(first["nodes"])
        self.spawn_calls = int(ready[0]["spawn_calls"])
        self.workers_lost = ready[0].get("workers_lost", "?")  # "?": not recorded
        self.exit_status = ready[0].get("exit_status") or "0"
        self.start_seconds = (float(ready[0]["launcher_cpu_seconds"])
                              + float(ready[0]["master_cpu_seconds"]))
        span = len(generations) - 1

        def work(row):
            return (float(row["master_cpu_seconds"]) - int(row["idle_poll_nanoseconds"]) / 1e9
                    - int(row["transport_nanoseconds"]) / 1e9)

        # A worker replaced between the snapshots re-ran tasks: those figures are not one pool's.
        self.replaced_during = first["spawn_calls"] != last["spawn_calls"]
        g = {name: (float(last[name]) - float(first[name])) / span for name in COUNTED}
        g["transport_seconds"] = (int(last["transport_nanoseconds"])
                                  - int(first["transport_nanoseconds"])) / 1e9 / span
        g["work_seconds"] = min(work(after) - work(before)
                                for before, after in zip(generations, generations[1:]))
        self.per_generation = g
        messages = g["sent_messages"] + g["received_messages"]
        self.work_per_message = g["work_seconds"] / messages
        heartbeats = g["received_heartbeats"]
        self.without_heartbeats = dict(g)
        self.without_heartbeats.update({
            "work_seconds": g["work_seconds"] - heartbeats * self.work_per_message,
            "received_messages": g["received_messages"] - heartbeats,
            "received_bytes": g["received_bytes"] - heartbeats * HEARTBEAT_BYTES})

    def parameter_copies_per_node(self, direction):
        vector = self.parameters * BYTES_PER_PARAMETER
        return self.per_generation[f"{direction}_bytes"] / vector / self.nodes


def load(path):
    """{policy: [Run, by workers and nodes]}."""
    grouped = {}
    for row in report_support.read_csv(path, FIELDS):
        grouped.setdefault((row["policy"], int(row["workers"]), int(row["nodes"])), []).append(row)
    runs = {}
    for (policy, workers, nodes), rows in grouped.items():
        try:
            runs.setdefault(policy, []).append(Run(rows))
        except ValueError as error:
            print(f"report.py: {policy}, {workers} workers on {nodes} nodes left out: {error}",
                  file=sys.stderr)
    return {policy: sorted(found, key=lambda run: (run.workers, run.nodes))
            for policy, found in runs.items()}


def fit(points):
    """(a, b, c) of a + b n + c k fitted to {(n, k, ...): value} (n workers on k nodes); c = 0 unless
    some worker count ran on two node counts (otherwise k follows n and c is noise), b = 0 too
    with one run. No cost falls as workers or nodes are added: a negative slope is noise, so it
    is dropped and the rest fitted again (a flat fit rather than one that reaches 0 further on)."""
    keys = list(points)  # (n, k), or (n, k, anything that tells runs of one layout apart)
    values = numpy.array([points[key] for key in keys])
    apart = len({key[:2] for key in keys}) > len({key[0] for key in keys})
    columns = [0, 1, 2] if apart else [0, 1]
    while columns:
        design = numpy.array([[(1.0, key[0], key[1])[c] for c in columns] for key in keys])
        if numpy.linalg.matrix_rank(design) < len(columns):
            columns.pop()
            continue
        coefficients = dict(zip(columns, numpy.linalg.lstsq(design, values, rcond=None)[0]))
        negative = [c for c in columns if c != 0 and coefficients[c] < 0]
        if not negative:
            return tuple(float(coefficients.get(c, 0.0)) for c in (0, 1, 2))
        columns.remove(min(negative, key=lambda c: coefficients[c]))
    raise ValueError("nothing to fit")


def start_fit(runs):
    """The start-up CPU fitted as a + b n + c k over `runs`; start-ups that replaced workers taken
    for lost spawned more than the pool: left out."""
    clean = [run for run in runs if run.workers_lost in ("0", "?")]
    return fit({(run.workers, run.nodes, run.policy): run.start_seconds
                for run in (clean if len(clean) >= 2 else runs)})


def nodes_for(n):
    return math.ceil(n / NODE_SIZE)


class Model:
    """The fitted per-generation costs of one policy and the projection they give."""

    def __init__(self, runs):
        self.parameters = runs[0].parameters
        steady = [run for run in runs if not run.replaced_during]
        self.fits = {name: fit({(run.workers, run.nodes): run.without_heartbeats[name]
                                for run in (steady if len(steady) >= 2 else runs)})
                     for name in FITTED}
        self.work_per_message = statistics.median(run.work_per_message for run in runs)
        self.start = start_fit(runs)

    def at(self, name, n, nodes=None):
        a, b, c = self.fits[name]
        return max(0.0, a + b * n + c * (nodes_for(n) if nodes is None else nodes))

    @staticmethod
    def heartbeats():
        """Per generation of the paper's workload: a heartbeat per HEARTBEAT_SECONDS of a task."""
        return PAPER_TASKS * math.floor(PAPER_TAU / HEARTBEAT_SECONDS)

    @staticmethod
    def tree_levels(nodes):
        """Levels of the broadcast's tree over `nodes` (RELAY_FANOUT roots, RELAY_FANOUT onward)."""
        levels, reached = 0, 0
        while reached < nodes:
            levels += 1
            reached += RELAY_FANOUT ** levels
        return levels

    def relay_seconds(self, n, bandwidth):
        """The broadcast's way through the tree's levels after the master's: each level's relay
        receives the whole body, then sends its RELAY_FANOUT copies (a store-and-forward upper
        bound)."""
        copy = self.parameters * BYTES_PER_PARAMETER / bandwidth + LATENCY
        return max(0, self.tree_levels(nodes_for(n)) - 1) * RELAY_FANOUT * copy

    def master_seconds(self, n, bandwidth):
        heartbeats = self.heartbeats()
        data = (self.at("sent_bytes", n) + self.at("received_bytes", n)
                + heartbeats * HEARTBEAT_BYTES)
        messages = self.at("sent_messages", n) + self.at("received_messages", n) + heartbeats
        work = self.at("work_seconds", n) + heartbeats * self.work_per_message
        return work + data / bandwidth + messages * LATENCY + self.relay_seconds(n, bandwidth)

    def generation_seconds(self, n, bandwidth):
        return math.ceil(PAPER_TASKS / n) * PAPER_TAU + self.master_seconds(n, bandwidth)

    def efficiency(self, n, bandwidth):
        return math.ceil(PAPER_TASKS / n) * PAPER_TAU / self.generation_seconds(n, bandwidth)


def label(policy, runs):
    return f"{policy} (P = {runs[0].parameters:,})"


def measured_table(runs_by_policy):
    header = ["policy", "P", "workers", "nodes", "master work ms", "MPI calls ms",
              "master CPU ms",
              "messages out / in", "of which heartbeats", "MB out / in",
              "P-vectors out / in per node", "spawn calls",
              "workers lost",
              "start-up CPU s", "start-up ms / worker"]
    lines = []
    for policy, runs in runs_by_policy.items():
        for run in runs:
            g = run.per_generation
            lines.append([
                policy, f"{run.parameters:,}", str(run.workers), str(run.nodes),
                f"{g['work_seconds'] * 1e3:.1f}", f"{g['transport_seconds'] * 1e3:.1f}",
                f"{g['master_cpu_seconds'] * 1e3:.1f}",
                f"{g['sent_messages']:,.0f} / {g['received_messages']:,.0f}",
                f"{g['received_heartbeats']:,.0f}",
                f"{g['sent_bytes'] / 1e6:.2f} / {g['received_bytes'] / 1e6:.2f}",
                f"{run.parameter_copies_per_node('sent'):.1f} / "
                f"{run.parameter_copies_per_node('received'):.1f}",
                str(run.spawn_calls), str(run.workers_lost), f"{run.start_seconds:.2f}",
                f"{run.start_seconds / run.workers * 1e3:.1f}"])
    return report_support.markdown(header, lines, right_aligned=set(range(1, len(header))))


def linear(coefficients, scale, unit):
    a, b, c = (value * scale for value in coefficients)
    unit = f" {unit}" if unit else ""
    return f"{a:,.1f}{unit} + {b:,.2f}{unit} x n + {c:,.1f}{unit} x k"


def model_text(runs_by_policy, models):
    lines = []
    for policy, model in models.items():
        f = model.fits
        lines.append(
            f"- {label(policy, runs_by_policy[policy])}: work "
            f"{linear(f['work_seconds'], 1e3, 'ms')} ({model.work_per_message * 1e6:.1f} us per "
            "message, the median of the runs); bytes out "
            f"{linear(f['sent_bytes'], 1e-3, 'kB')}, in {linear(f['received_bytes'], 1e-3, 'kB')}; "
            f"messages out {linear(f['sent_messages'], 1, '')}, in "
            f"{linear(f['received_messages'], 1, '')}; start-up (mpirun + daemons + master) "
            f"{linear(model.start, 1e3, 'ms')}")
    return "\n".join(lines) + "\n"


def projection_table(models):
    header = ["workers", "paper: Fiber s", "paper: IPyParallel s"]
    for policy in models:
        for network in NETWORKS:
            header.append(f"{policy} {network}")
    lines = []
    for n in PROJECTED:
        fiber, ipp = PAPER.get(n, (None, None))
        cells = [f"{n:,}", f"{fiber:,}" if fiber else "-",
                 f"{ipp:,}" if ipp else ("failed" if n in PAPER else "-")]
        for model in models.values():
            for bandwidth in NETWORKS.values():
                seconds = model.generation_seconds(n, bandwidth) * PAPER_ITERATIONS
                cells.append(f"{seconds:,.0f} ({model.efficiency(n, bandwidth):.0%})")
        lines.append(cells)
    return report_support.markdown(header, lines, right_aligned=set(range(1, len(header))))


def verdict(ok):
    return "ok" if ok else "MISS"


def checks(runs_by_policy, models):
    out = []
    for policy, runs in runs_by_policy.items():
        largest = max(runs, key=lambda run: (run.workers, run.nodes))
        if policy != "pendulum-353":  # at P = 353 the task messages outweigh the parameters
            for direction, what in (("sent", "parameter copies sent"),
                                    ("received", "gradient-sized vectors received")):
                copies = largest.parameter_copies_per_node(direction)
                out.append(f"- {verdict(copies <= MAX_COPIES_PER_NODE)}: {policy}, "
                           f"{largest.workers} workers on {largest.nodes} nodes: {copies:.1f} "
                           f"{what} per node per generation (target <= {MAX_COPIES_PER_NODE})")
        clean = [run for run in runs if run.workers_lost in ("0", "?")] or runs
        spawns = max(clean, key=lambda run: (run.spawn_calls > run.nodes, run.workers))
        out.append(f"- {verdict(spawns.spawn_calls <= spawns.nodes)}: {policy}, "
                   f"{spawns.workers} workers on {spawns.nodes} nodes started with "
                   f"{spawns.spawn_calls} spawn call(s) (target <= {spawns.nodes}; of the runs "
                   "without lost workers, one that misses, else the largest)")
        for run in runs:
            if run.exit_status != "0":
                out.append(f"- note: {policy}, {run.workers} workers on {run.nodes} nodes: every "
                           f"generation ran, but mpirun exited with status {run.exit_status}")
            if run.workers_lost not in ("0", "?"):
                when = ("between the generations measured: left out of the fits too"
                        if run.replaced_during else "before the generations measured")
                out.append(f"- note: {policy}, {run.workers} workers on {run.nodes} nodes: "
                           f"{run.workers_lost} taken for lost and replaced ({run.spawn_calls} "
                           f"spawn call(s) by the pool's start), {when}; left out of the start-up "
                           "and spawn checks")
        small = min(runs, key=lambda run: (run.workers < 4, run.workers))

        def per_message(run):
            g = run.per_generation
            return g["work_seconds"] / (g["sent_messages"] + g["received_messages"])

        ratio = per_message(largest) / per_message(small)
        out.append(f"- {verdict(ratio <= MAX_WORK_PER_MESSAGE_RATIO)}: {policy}, master work per "
                   f"message {per_message(small) * 1e6:.1f} us at {small.workers} workers, "
                   f"{per_message(largest) * 1e6:.1f} us at {largest.workers}: {ratio:.2f}x "
                   f"(target <= {MAX_WORK_PER_MESSAGE_RATIO}x)")
        if policy in EFFICIENCY_TARGETS:
            target = EFFICIENCY_TARGETS[policy]
            for network, bandwidth in NETWORKS.items():
                efficiency = models[policy].efficiency(TARGET_WORKERS, bandwidth)
                out.append(f"- {verdict(efficiency >= target)}: {policy}, projected efficiency "
                           f"at {TARGET_WORKERS:,} workers, {network}: {efficiency:.1%} "
                           f"(target >= {target:.0%})")
    # The pool's start does not depend on the policy (the same spawns, hellos and welcomes): one
    # fit over every run, three times the points of one policy's.
    every_run = [run for runs in runs_by_policy.values() for run in runs]
    per_worker = start_fit(every_run)[1]
    per_policy = ", ".join(f"{policy} {model.start[1] * 1e3:.1f}" for policy, model in models.items())
    # A slope of 0: these runs do not determine the cost per worker.
    start_verdict = (verdict(per_worker <= MAX_START_SECONDS_PER_WORKER) if per_worker > 0
                     else "undetermined")
    out.append(f"- {start_verdict}: mpirun + daemons + master CPU per started worker "
               f"{per_worker * 1e3:.1f} ms (slope of one fit over every policy's runs without lost "
               f"workers; each policy's alone: {per_policy} ms; target <= "
               f"{MAX_START_SECONDS_PER_WORKER * 1e3:.0f} ms)")
    return "\n".join(out) + "\n"


def plot(path, runs_by_policy, models):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (projected, work, data) = plt.subplots(1, 3, figsize=(17, 5))
    counts = list(PROJECTED)
    paper = sorted(PAPER)
    projected.loglog(paper, [PAPER[n][0] for n in paper], "ko-", label="paper: Fiber")
    ipp = [n for n in paper if PAPER[n][1]]
    projected.loglog(ipp, [PAPER[n][1] for n in ipp], "kx--", label="paper: IPyParallel")
    projected.loglog(counts, [math.ceil(PAPER_TASKS / n) * PAPER_TAU * PAPER_ITERATIONS
                              for n in counts], ":", color="grey", label="ideal (episodes only)")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for color, (policy, model) in zip(colors, models.items()):
        for style, (network, bandwidth) in zip(("-", "--"), NETWORKS.items()):
            projected.loglog(counts, [model.generation_seconds(n, bandwidth) * PAPER_ITERATIONS
                                      for n in counts], style, color=color,
                             label=f"fiber projected, {label(policy, runs_by_policy[policy])}, "
                                   f"{network}")
    projected.set_xlabel("workers")
    projected.set_ylabel("seconds per 50 iterations")
    projected.set_title("paper's ES workload (population 2,048): projected")
    projected.set_xticks(counts, [f"{n:,}" for n in counts])
    projected.minorticks_off()
    projected.legend(fontsize=7, loc="lower left")
    for color, (policy, runs) in zip(colors, runs_by_policy.items()):
        n = [run.workers for run in runs]
        work.plot(n, [run.without_heartbeats["work_seconds"] * 1e3 for run in runs], "o",
                  color=color, label=f"{label(policy, runs)}, measured")
        work.plot(n, [models[policy].at("work_seconds", run.workers, run.nodes) * 1e3
                      for run in runs], "_", markersize=14, color=color, label="its fit")
        data.plot(n, [run.per_generation["sent_bytes"] / 1e6 for run in runs], "^", color=color,
                  label=f"{policy} out")
        data.plot(n, [run.per_generation["received_bytes"] / 1e6 for run in runs], "v",
                  color=color, label=f"{policy} in")
    work.set_xscale("log")
    work.set_yscale("log")
    work.set_xlabel("workers (simulated nodes: see the table)")
    work.set_ylabel("master work per generation, ms")
    work.set_title("master work (CPU less idle polls, MPI calls, heartbeats):\nmeasured, and the fit a + b n + c k", fontsize=10)
    work.legend(fontsize=8)
    data.set_xlabel("workers (simulated nodes: see the table)")
    data.set_ylabel("MB per generation at the master")
    data.set_xscale("log")
    data.set_yscale("log")
    data.set_title("measured bytes sent and received by the master")
    data.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    args = report_support.arguments(__doc__.splitlines()[0])
    runs_by_policy = load(args.csv)
    if not runs_by_policy:
        sys.exit("report.py: no complete ES scaling run in " + args.csv)
    models = {policy: Model(runs) for policy, runs in runs_by_policy.items()}
    population = statistics.mode(run.population for runs in runs_by_policy.values()
                                 for run in runs)
    text = (
        f"Measured: per generation of fiber-es (population {population:,}, one antithetic pair "
        "per task), on simulated nodes (the nodes column: those the workers used, spread "
        "evenly); the master's work is its CPU time (all threads) less its polls that found "
        "nothing and less its MPI calls (the smallest of the generations); MPI calls: its CPU "
        "inside MPI calls that did something, the transport's (here TCP over loopback through "
        "the kernel; the projection counts the stated network instead); "
        "P-vectors = bytes / (8 P) / nodes; start-up = CPU of mpirun, the node daemons and the "
        "master until the pool is "
        "ready.\n\n" + measured_table(runs_by_policy)
        + "\nFitted per generation (n workers on k nodes; the heartbeats' messages, bytes and "
        "share of the work left out):\n\n" + model_text(runs_by_policy, models)
        + f"\nProjected: the paper's workload ({PAPER_TASKS:,} tasks of {PAPER_TAU:.2f} s, "
        f"{PAPER_ITERATIONS} iterations), seconds and efficiency, with {NODE_SIZE} workers per "
        f"node, {LATENCY * 1e6:.0f} us per message, every master cost serial, the broadcast's "
        f"further tree levels after the master's ({RELAY_FANOUT} copies each, store and "
        "forward), and "
        f"{Model.heartbeats():,} heartbeats per generation (one per {HEARTBEAT_SECONDS:g} s of "
        "a task, fiber's default):\n\n"
        + projection_table(models)
        + "\nThe issue's targets:\n\n" + checks(runs_by_policy, models))
    if population != 2 * PAPER_TASKS:
        text += (f"\n(Population {population:,}, not the paper's 2,048: the projection scales "
                 "these counts as they are.)\n")
    print(text)
    report_support.publish(args, "ES scaling", "es scaling", text)
    if args.plot:
        plot(args.plot, runs_by_policy, models)


if __name__ == "__main__":
    main()
