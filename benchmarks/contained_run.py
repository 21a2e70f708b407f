#!/usr/bin/python3
"""Runs one measuring program of scripts/bench.sh so that whatever it does costs a bounded time
and leaves no process behind.

The program runs in a session of its own, its stdout (whole lines) appended to the benchmark's
CSV, its stderr passed on. It is ended as hung when it runs past --limit seconds, or, with
--silence, when it prints nothing for that long. Whatever its end, every process it started is
then stopped and checked gone: each carries FIBER_BENCH_MEASURED=RUN:NAME in its environment
(daemons that leave the session still inherit it), RUN being $FIBER_BENCH_RUN, which bench.sh
sets once per run. Before it starts, the processes left by the run's earlier measurements are
stopped the same way, so that every measurement starts from a clean machine.

    contained_run.py --name NAME --output CSV [--limit S] [--silence S]
                     [--states CSV --framework FRAMEWORK [--hung-earlier WHERE]] -- COMMAND...

--states appends `framework,state,reason,last_line,stopped` (state ok, hung or failed; last_line:
the last line the program wrote to stderr; stopped: how many of its processes had to be stopped
at the end) for the reports' tables. --hung-earlier: the program hung in WHERE earlier in the run;
it is not run again, only recorded as hung. Exit status 0 when the program exited with 0 and
nothing was left running, 3 when it hung (or hung earlier), 1 otherwise.
"""

import argparse
import csv
import os
import selectors
import signal
import subprocess
import sys
import time

MARK = "FIBER_BENCH_MEASURED"
EXIT_GRACE_SECONDS = 3  # after a program's exit, for its workers to exit by themselves
TERM_GRACE_SECONDS = 3  # SIGTERM first: IPyParallel's engines stop their kernels on it
KILL_GRACE_SECONDS = 10  # after SIGKILL, until the kernel has taken every process down
POLL_SECONDS = 0.2
EXIT_STATUS = {"ok": 0, "failed": 1, "hung": 3}
LAST_LINE_CHARACTERS = 160  # of the program's last line on stderr, kept for the reports


class OneLineParser(argparse.ArgumentParser):
    """A bad command line is one line on stderr, exit status 2."""

    def error(self, message):
        print(f"contained_run: {message} (--help lists the options)", file=sys.stderr)
        sys.exit(2)


def parse_args():
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the measurement's name, for messages")
    parser.add_argument("--output", required=True, help="the CSV its stdout is appended to")
    parser.add_argument("--limit", type=float, default=600, help="seconds it may run at most")
    parser.add_argument("--silence", type=float, help="seconds it may go without printing")
    parser.add_argument("--states", help="the CSV its outcome is appended to")
    parser.add_argument("--framework", help="the framework it measures (with --states)")
    parser.add_argument("--hung-earlier", metavar="WHERE",
                        help="do not run it: it hung in WHERE earlier (with --states)")
    parser.add_argument("command", nargs="+", help="the program and its arguments")
    args = parser.parse_args()
    if args.limit <= 0 or (args.silence is not None and args.silence <= 0):
        parser.error("--limit and --silence must be positive")
    if bool(args.states) != bool(args.framework):
        parser.error("--states and --framework go together")
    if args.hung_earlier and not args.states:
        parser.error("--hung-earlier needs --states")
    return args


def marked_processes(prefix):
    """The live processes whose environment has MARK=prefix...: {pid: command name}."""
    wanted = f"{MARK}={prefix}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                variables = environ.read().split(b"\0")  # a zombie's is empty
            with open(f"/proc/{entry}/comm") as comm:
                name = comm.read().strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if any(variable.startswith(wanted) for variable in variables):
            found[int(entry)] = name
    return found


def describe(processes):
    """`3 (orted 12, python3 13, python3 14)` for {pid: command name}."""
    names = ", ".join(f"{name} {pid}" for pid, name in sorted(processes.items()))
    return f"{len(processes)} ({names})" if processes else "none"


def signal_all(pids, number):
    for pid in pids:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass


def wait_gone(prefix, seconds):
    deadline = time.monotonic() + seconds
    while (left := marked_processes(prefix)) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    return left


def stop_marked(prefix, session=None):
    """Stops the marked processes (and the session's group): SIGTERM, then SIGKILL. Returns those
    there were and those still alive after all ({pid: command name} each)."""
    found = marked_processes(prefix)
    groups = [session] if session else []
    for number, grace in ((signal.SIGTERM, TERM_GRACE_SECONDS),
                          (signal.SIGKILL, KILL_GRACE_SECONDS)):
        for group in groups:
            try:
                os.killpg(group, number)
            except ProcessLookupError:
                pass
        left = marked_processes(prefix)
        if not left:
            break
        signal_all(left, number)
        left = wait_gone(prefix, grace)
    return found, left


class Outcome:
    """What the program did: state ok, hung or failed, and why."""

    def __init__(self):
        self.state, self.reason = "ok", ""
        self.last_line = ""

    def end(self, state, reason):
        self.state, self.reason = state, reason


def run(args, mark, outcome):
    """Runs the command, copying its output, until it exits or hangs; returns its Popen."""
    environment = dict(os.environ, **{MARK: mark})
    program = subprocess.Popen(args.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment, start_new_session=True)
    selector = selectors.DefaultSelector()
    selector.register(program.stdout, selectors.EVENT_READ, "stdout")
    selector.register(program.stderr, selectors.EVENT_READ, "stderr")
    partial = {"stdout": b"", "stderr": b""}
    started = last_output = time.monotonic()
    with open(args.output, "ab") as output:
        while selector.get_map():
            for key, _ in selector.select(timeout=POLL_SECONDS):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                last_output = time.monotonic()
                lines = (partial[key.data] + data).split(b"\n")
                partial[key.data] = lines.pop()  # a line cut off by a hang is dropped
                if key.data == "stdout":
                    output.write(b"".join(line + b"\n" for line in lines))
                    output.flush()
                else:
                    sys.stderr.buffer.write(data)
                    sys.stderr.flush()
                    said = [line for line in lines if line.strip()]
                    if said:
                        last = said[-1].decode(errors="replace").strip()
                        outcome.last_line = last[:LAST_LINE_CHARACTERS]
            now = time.monotonic()
            if program.poll() is not None and not selector.select(timeout=0):
                break  # exited; whoever still holds its pipes is stopped below
            if now - started > args.limit:
                outcome.end("hung", f"not done in {args.limit:g} s")
                break
            if args.silence is not None and now - last_output > args.silence:
                outcome.end("hung", f"no output for {args.silence:g} s")
                break
        if outcome.state == "ok" and partial["stdout"]:  # a last line with no newline
            output.write(partial["stdout"] + b"\n")
    selector.close()
    return program


def main():
    args = parse_args()
    if args.hung_earlier:
        outcome = Outcome()
        outcome.end("hung", f"in {args.hung_earlier} earlier in this run; not run again")
        print(f"contained_run: {args.name}: not run, {outcome.reason}", file=sys.stderr)
        record(args, outcome, 0)
        sys.exit(EXIT_STATUS["hung"])
    run_id = os.environ.get("FIBER_BENCH_RUN", f"{os.getpid()}-{time.time_ns()}")
    earlier, left = stop_marked(f"{run_id}:")
    if left:
        sys.exit(f"contained_run: {args.name}: processes of an earlier measurement would not "
                 f"end: {describe(left)}")
    if earlier:
        print(f"contained_run: {args.name}: stopped processes of an earlier measurement: "
              f"{describe(earlier)}", file=sys.stderr)
    # bench.sh's Ctrl-C or SIGTERM does not reach the program's own session: stop it here.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    mark = f"{run_id}:{args.name}"
    outcome = Outcome()
    program = None
    try:
        program = run(args, mark, outcome)
    finally:
        if program and outcome.state == "ok":
            wait_gone(mark, EXIT_GRACE_SECONDS)
        stopped, left = stop_marked(mark, program.pid if program else None)
        if program:
            program.wait()
    if outcome.state == "ok" and program.returncode != 0:
        code = program.returncode
        outcome.end("failed", f"killed by {signal.Signals(-code).name}" if code < 0
                    else f"exit status {code}")
    if left:
        outcome.end("failed", f"{len(left)} processes would not end: {describe(left)}")
    if outcome.state != "ok":
        print(f"contained_run: {args.name}: {outcome.state} ({outcome.reason}), stopped "
              f"{describe(stopped)}", file=sys.stderr)
    elif stopped:
        print(f"contained_run: {args.name}: stopped what it left running: {describe(stopped)}",
              file=sys.stderr)
    if args.states:
        record(args, outcome, len(stopped))
    sys.exit(EXIT_STATUS[outcome.state])


def record(args, outcome, stopped):
    """Appends the outcome to --states."""
    new = not os.path.exists(args.states) or os.path.getsize(args.states) == 0
    with open(args.states, "a", newline="") as states:
        writer = csv.writer(states)
        if new:
            writer.writerow(["framework", "state", "reason", "last_line", "stopped"])
        writer.writerow([args.framework, outcome.state, outcome.reason, outcome.last_line,
                         stopped])


if __name__ == "__main__":
    main()
