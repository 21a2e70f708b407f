#!/usr/bin/python3
"""Draw the learning curve of a fiber RL run log (apps/rl/storage/run_log.hpp) to a PNG.

usage: scripts/plot.py RUN.h5 [-o OUT.png] [--x COLUMN] [--y COLUMN ...] [--title TEXT]

  RUN.h5        a run log written by fiber::rl::RunLog (it may still be written: the file is read
                without locking, up to the last complete row)
  -o OUT.png    where to write the plot (default: RUN.png beside RUN.h5)
  --x COLUMN    the horizontal axis: timesteps, generation, seconds, ... (default: timesteps, else
                generation, else iteration, else the row number)
  --y COLUMN..  the curves (default: return_mean, plus the evaluation return if the log has one)

A curve NAME_mean is drawn with a shaded band from NAME_min to NAME_max when the log has those
columns (else NAME_mean +- NAME_std if it has that). The title names the environment (and the
algorithm) from the log's /meta.

A rollout log (RUN.rollouts.h5, RUN.tasks.h5, apps/rl/storage/rollout_log.hpp: it has a
`worker` column) is drawn as up to two panels instead: the return distribution per generation (or iteration)
as percentile bands (5-95, 25-75, median) of its rollouts' returns (the perturbed ones: rows of
sign 0, the evaluations, are left out), and each task's wall seconds per worker (one dot per
task: a straggler is a dot far above its worker's others), each if the log has its columns
(fiber-ppo: returns in RUN.rollouts.h5, task times in RUN.tasks.h5); --x, --y do not apply.

Run it with Debian's /usr/bin/python3 (h5py, numpy, matplotlib). Errors - a missing file, a file
that is not a run log, an unknown column - print one line and exit with status 2.
"""

import argparse
import os
import sys

# Read a log while its run appends to it: the writer holds HDF5's file lock for its whole run.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

PROG = "plot.py"
X_DEFAULTS = ("timesteps", "generation", "iteration")
X_LABELS = {
    "timesteps": "environment steps",
    "generation": "generation",
    "iteration": "iteration",
    "seconds": "wall-clock time (s)",
    "row": "row",
}
EVAL_COLUMNS = ("eval_return_mean", "eval_return")
ENVIRONMENT_KEYS = ("environment", "env", "env_name", "env_id")
ALGORITHM_KEYS = ("algorithm", "algo")


class Failure(Exception):
    """A problem reported as one line and exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of argparse's usage + message
        raise Failure(f"{message} (see --help)")


def first_line(error):
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def text(value):
    """A string attribute or dataset value as h5py returns it (bytes, numpy bytes or str)."""
    if hasattr(value, "tobytes") and not isinstance(value, (bytes, str)):
        value = value.tobytes() if value.dtype.kind == "S" else value.item()
    if isinstance(value, bytes):
        value = value.rstrip(b"\0").decode("utf-8", errors="replace")
    return str(value)


def load(path):
    """The run log's columns (name -> numpy array, in the log's order) and its metadata."""
    if not os.path.exists(path):
        raise Failure(f"{path}: no such file")
    if os.path.isdir(path):
        raise Failure(f"{path}: is a directory, not a run log")
    try:
        import h5py
    except ImportError as error:
        raise Failure(f"needs h5py ({error}); run it with /usr/bin/python3") from error
    try:
        f = h5py.File(path, "r")
    except OSError as error:
        raise Failure(f"{path}: not an HDF5 file, or damaged ({first_line(error)})") from error
    with f:
        marker = text(f.attrs["format"]) if "format" in f.attrs else None
        if marker != "fiber-runlog" or not isinstance(f.get("log"), h5py.Group):
            what = f"its format is '{marker}'" if marker else "no 'format' marker"
            raise Failure(f"{path}: not a fiber run log ({what})")
        log = f["log"]
        names = [name for name, obj in log.items() if isinstance(obj, h5py.Dataset)]
        if not names:
            raise Failure(f"{path}: the run log has no columns")
        # Complete rows only: every column has them and /log@rows counts them.
        rows = min(len(log[name]) for name in names)
        if "rows" in log.attrs:
            rows = min(rows, max(int(log.attrs["rows"]), 0))
        columns = {}
        for name in names:
            try:
                columns[name] = log[name][:rows].astype("float64")
            except (OSError, ValueError, TypeError) as error:
                raise Failure(f"{path}: cannot read /log/{name} ({first_line(error)})") from error
        meta = {}
        if isinstance(f.get("meta"), h5py.Group):
            for key, obj in f["meta"].items():
                if isinstance(obj, h5py.Dataset) and obj.shape == ():
                    try:
                        meta[key] = text(obj[()])
                    except (OSError, ValueError, TypeError):
                        pass  # metadata is decoration here
    return columns, meta, rows


def choose_columns(args, columns):
    available = ", ".join(columns)

    def known(name, row_allowed=False):
        if name not in columns and not (row_allowed and name == "row"):
            raise Failure(f"{args.run}: unknown column '{name}' (columns: {available})")
        return name

    if args.x is not None:
        x = known(args.x, row_allowed=True)
    else:
        x = next((name for name in X_DEFAULTS if name in columns), "row")
    if args.y:
        ys = [known(name) for name in args.y]
    else:
        if "return_mean" not in columns:
            raise Failure(f"{args.run}: no column 'return_mean'; choose curves with --y "
                          f"(columns: {available})")
        ys = ["return_mean"] + [name for name in EVAL_COLUMNS if name in columns][:1]
    return x, ys


def curve_label(name):
    if name == "return_mean":
        return "mean return"
    if name in EVAL_COLUMNS:
        return "evaluation return"
    return name


def band(name, columns):
    """(low, high, label) around the curve `name`, or None."""
    if not name.endswith("_mean"):
        return None
    base = name[: -len("_mean")]
    if f"{base}_min" in columns and f"{base}_max" in columns:
        return columns[f"{base}_min"], columns[f"{base}_max"], "min-max"
    if f"{base}_std" in columns:
        mean, std = columns[name], columns[f"{base}_std"]
        return mean - std, mean + std, "+-1 std"
    return None


def title_of(args, meta):
    if args.title:
        return args.title
    environment = next((meta[k] for k in ENVIRONMENT_KEYS if meta.get(k)), None)
    algorithm = next((meta[k] for k in ALGORITHM_KEYS if meta.get(k)), None)
    if environment and algorithm:
        return f"{algorithm} on {environment}"
    return environment or algorithm or os.path.basename(args.run)


ROLLOUT_STEPS = ("generation", "iteration")
ROLLOUT_RETURNS = ("return", "return_mean")
ROLLOUT_SECONDS = ("task_seconds", "seconds")
ROLLOUT_TASKS = ("task", "slot")
PERCENTILE_BANDS = ((5, 95), (25, 75))


def save(fig, output, what):
    """Writes the figure as PNG and says what it drew; the figure is closed either way."""
    import matplotlib.pyplot as plt  # (the callers chose the Agg backend)

    fig.tight_layout()
    try:
        fig.savefig(output, format="png")
    except OSError as error:
        raise Failure(f"cannot write {output} ({error.strerror or first_line(error)})") from error
    finally:
        plt.close(fig)
    print(f"{PROG}: wrote {output} ({what})")


def is_rollout_log(columns):
    return "worker" in columns


def first_of(names, columns):
    return next((n for n in names if n in columns), None)


def draw_returns(ax, step, steps, returns, perturbed):
    import numpy as np

    xs = np.unique(steps[perturbed])
    per_step = [returns[perturbed & (steps == x)] for x in xs]
    for low, high in PERCENTILE_BANDS:
        ax.fill_between(xs, [np.percentile(r, low) for r in per_step],
                        [np.percentile(r, high) for r in per_step], color="tab:blue",
                        alpha=0.2, linewidth=0, label=f"percentiles {low}-{high}")
    ax.plot(xs, [np.median(r) for r in per_step], color="tab:blue", label="median")
    ax.set_xlabel(step)
    ax.set_ylabel("return")
    ax.legend(loc="best")
    return f"{len(xs)} {step}s"


def draw_task_times(ax, steps, tasks, workers, seconds):
    import numpy as np

    # One dot per task (its first row: a task's rows share its worker and seconds).
    _, first_rows = np.unique(steps * (tasks.max() + 1) + tasks, return_index=True)
    from matplotlib.ticker import MaxNLocator

    ax.scatter(workers[first_rows], seconds[first_rows], s=6, alpha=0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("worker")
    ax.set_ylabel("task wall seconds")
    ax.set_title(f"{len(first_rows)} tasks on {len(np.unique(workers))} workers")
    return f"{len(first_rows)} tasks"


def plot_rollouts(args, columns, meta, rows, output):
    """Return percentiles per step if the log has returns, task seconds per worker if it has
    task times (fiber-es's rollouts have both; fiber-ppo's rollouts.h5 returns, tasks.h5 times)."""
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    step = first_of(ROLLOUT_STEPS, columns)
    returns = first_of(ROLLOUT_RETURNS, columns)
    seconds = first_of(ROLLOUT_SECONDS, columns)
    task = first_of(ROLLOUT_TASKS, columns)
    draw_times = seconds is not None and task is not None
    if step is None or (returns is None and not draw_times):
        raise Failure(f"{args.run}: a rollout log without a step, return or task-time column")
    steps = columns[step]
    perturbed = columns["sign"] != 0 if "sign" in columns else np.ones(rows, dtype=bool)
    if returns is not None and not perturbed.any():
        raise Failure(f"{args.run}: no perturbed rollouts to draw")
    panels = (returns is not None) + draw_times
    fig, axes = plt.subplots(panels, 1, figsize=(8, 4 * panels), dpi=120, squeeze=False)
    axes = list(axes[:, 0])
    drawn = []
    if returns is not None:
        drawn.append(draw_returns(axes[0], step, steps, columns[returns], perturbed))
    if draw_times:
        drawn.append(draw_task_times(axes[-1], steps, columns[task], columns["worker"],
                                     columns[seconds]))
    axes[0].set_title(title_of(args, meta) + (" - " + axes[0].get_title()
                                              if axes[0].get_title() else ""))
    for ax in axes:
        ax.grid(True, alpha=0.3)
    save(fig, output, f"{rows} rollout rows, {', '.join(drawn)}")


def plot(args):
    columns, meta, rows = load(args.run)
    if is_rollout_log(columns):
        if rows == 0:
            raise Failure(f"{args.run}: the rollout log has no rows yet")
        output = args.output or os.path.splitext(args.run)[0] + ".png"
        plot_rollouts(args, columns, meta, rows, output)
        return
    x_name, ys = choose_columns(args, columns)
    if rows == 0:
        raise Failure(f"{args.run}: the run log has no rows yet")
    output = args.output or os.path.splitext(args.run)[0] + ".png"

    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def finite(values):
        return np.where(np.isfinite(values), values, np.nan)

    x = np.arange(rows, dtype="float64") if x_name == "row" else finite(columns[x_name])
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name in ys:
        (line,) = ax.plot(x, finite(columns[name]), label=curve_label(name), linewidth=1.6)
        shaded = band(name, columns)
        if shaded is not None:
            low, high, what = shaded
            ax.fill_between(x, finite(low), finite(high), color=line.get_color(), alpha=0.2,
                            linewidth=0, label=f"{curve_label(name)} ({what})")
    ax.set_xlabel(X_LABELS.get(x_name, x_name))
    ax.set_ylabel("return" if all("return" in name for name in ys) else ", ".join(ys))
    ax.set_title(title_of(args, meta))
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    save(fig, output, f"{rows} rows, x = {x_name}, y = {', '.join(ys)}")


def main(argv=None):
    parser = Parser(prog=PROG, description="Draw the learning curve of a fiber run log to a PNG.")
    parser.add_argument("run", metavar="RUN.h5", help="the run log")
    parser.add_argument("-o", "--output", metavar="OUT.png", help="default: RUN.png")
    parser.add_argument("--x", metavar="COLUMN",
                        help="x axis: timesteps, generation, seconds, ... or row")
    parser.add_argument("--y", metavar="COLUMN", nargs="+",
                        help="curves (default: return_mean and the evaluation return)")
    parser.add_argument("--title", help="default: from the log's /meta (environment, algorithm)")
    try:
        plot(parser.parse_args(argv))
    except Failure as failure:
        print(f"{PROG}: {failure}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
