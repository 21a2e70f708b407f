"""What the Python tests share: a pool per test file, and Python programs run on their own."""

import os
import subprocess
import sys

import pytest

import fiber

# A program of its own (python3 -c) gets this long before it counts as hung.
PROGRAM_TIMEOUT_SECONDS = 120


@pytest.fixture(scope="module")
def pool():
    with fiber.Pool(2) as shared:
        yield shared


def run_program(code, env=None):
    """Runs `python3 -c code` as a master of its own; returns its completed process."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=PROGRAM_TIMEOUT_SECONDS,
        env={**os.environ, **(env or {})},
    )


def start_marked_program(arguments, mark):
    """Starts `python3 ARGUMENTS...` as a master of its own, its output piped as text, with `mark`
    in its environment (FIBER_TEST_MARK), which its workers and task processes inherit."""
    return subprocess.Popen(
        [sys.executable, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "FIBER_TEST_MARK": mark},
    )


def started(target, *args):
    """A fiber.Process of target(*args), started."""
    process = fiber.Process(target=target, args=args)
    process.start()
    return process


def ended(process):
    """The process's exit code, once it has ended."""
    process.join()
    return process.exitcode
