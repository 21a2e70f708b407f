#!/usr/bin/python3
"""fiber::Queue items/s between two Processes and fiber::Pipe round trips/s, beside Python's
multiprocessing.Queue and Pipe measured in the same invocation: queue_pipe (benchmarks/queue_pipe/)
and the same producer/consumer and ping-pong with multiprocessing, interleaved, best of --runs
each; a Markdown table of the rates and fiber's ratio to Python on stdout.

    /usr/bin/python3 queue_pipe.py BUILD_DIR [--items N] [--round-trips N] [--batch N]
                                             [--runs N] [--csv PATH]

Python's Queue has no batch call: fiber's put_many / get_many row is set beside its one-item
rate.
"""

import argparse
import csv
import io
import multiprocessing
import os
import subprocess
import sys
import time

STOP = -1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the build directory")
    parser.add_argument("--items", type=int, default=200_000, help="queue items per measure")
    parser.add_argument("--round-trips", type=int, default=20_000, help="pipe round trips")
    parser.add_argument("--batch", type=int, default=1000, help="fiber's put_many batch")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs; best of them")
    parser.add_argument("--csv", help="also write the best rates here")
    args = parser.parse_args()
    if min(args.items, args.round_trips, args.batch, args.runs) <= 0:
        parser.error("--items, --round-trips, --batch and --runs must be positive")
    return args


def produce(queue, items):
    for item in range(items):
        queue.put(item)


def consume(queue, items, timing):
    queue.get()
    start = time.perf_counter()  # from the first item, as fiber's consumer
    for _ in range(items - 1):
        queue.get()
    timing.put(time.perf_counter() - start)


def pong(end):
    while (ball := end.recv()) != STOP:
        end.send(ball + 1)


def ping(end, round_trips, timing):
    end.send(0)
    end.recv()  # the other process's start is not counted, as in fiber's
    start = time.perf_counter()
    for ball in range(round_trips):
        end.send(ball)
        end.recv()
    timing.put(time.perf_counter() - start)
    end.send(STOP)


def python_queue_rate(items):
    queue, timing = multiprocessing.Queue(), multiprocessing.Queue()
    processes = [multiprocessing.Process(target=consume, args=(queue, items, timing)),
                 multiprocessing.Process(target=produce, args=(queue, items))]
    for process in processes:
        process.start()
    seconds = timing.get()
    for process in processes:
        process.join()
    return (items - 1) / seconds


def python_pipe_rate(round_trips):
    pinger_end, ponger_end = multiprocessing.Pipe()
    timing = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=pong, args=(ponger_end,)),
                 multiprocessing.Process(target=ping, args=(pinger_end, round_trips, timing))]
    for process in processes:
        process.start()
    seconds = timing.get()
    for process in processes:
        process.join()
    return round_trips / seconds


def fiber_rates(args):
    """{measure: per second} of one queue_pipe run."""
    command = [os.path.join(args.build, "benchmarks/queue_pipe/queue_pipe"), "--items",
               str(args.items), "--round-trips", str(args.round_trips), "--batch",
               str(args.batch)]
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"queue_pipe.py: queue_pipe exited with {done.returncode}")
    return {measure: float(per_second)
            for _, measure, _, _, per_second in csv.reader(io.StringIO(done.stdout))}


def table(fiber, python):
    rows = [("Queue items/s, one put/get per item", fiber["queue_items"], python["queue"]),
            ("Queue items/s, put_many/get_many (fiber) vs one per item (Python)",
             fiber["queue_items_batched"], python["queue"]),
            ("Pipe round trips/s", fiber["pipe_round_trips"], python["pipe"])]
    out = ["| between two processes | fiber | Python multiprocessing | fiber / Python |",
           "|---|---:|---:|---:|"]
    out += [f"| {label} | {ours:,.0f} | {theirs:,.0f} | {ours / theirs:.2f} |"
            for label, ours, theirs in rows]
    return "\n".join(out) + "\n"


def main():
    args = parse_args()
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    fiber, python = {}, {}
    for _ in range(args.runs):
        for measure, rate in fiber_rates(args).items():
            fiber[measure] = max(fiber.get(measure, 0.0), rate)
        python["queue"] = max(python.get("queue", 0.0), python_queue_rate(args.items))
        python["pipe"] = max(python.get("pipe", 0.0), python_pipe_rate(args.round_trips))
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["framework", "measure", "per_second"])
            writer.writerows(["fiber", measure, f"{rate:.1f}"] for measure, rate in fiber.items())
            writer.writerows(["multiprocessing", measure, f"{rate:.1f}"]
                             for measure, rate in python.items())
    sys.stdout.write(table(fiber, python))


if __name__ == "__main__":
    main()
