#!/usr/bin/python3
"""CTest plot_script: scripts/plot.py on a run log written by fiber_rl_storage.

usage: plot_test.py MAKE_LOG PLOT_PY
  MAKE_LOG  the rl_storage_make_log helper (writes a run log, or a checkpoint with --checkpoint)
  PLOT_PY   scripts/plot.py

Checks that the plots are valid PNG files (signature, IHDR, IEND, and matplotlib can read them
back), and that a missing file, a file that is not a run log and an unknown column each give
exit status 2 and exactly one line on stderr.
"""

import os
import struct
import subprocess
import sys
import tempfile

PYTHON = "/usr/bin/python3"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
failures = []


def check(condition, what):
    print(("ok      " if condition else "FAILED  ") + what)
    if not condition:
        failures.append(what)


def run(*args):
    return subprocess.run([PYTHON, PLOT, *args], capture_output=True, text=True, timeout=60)


def check_png(path, what):
    if not os.path.isfile(path):
        check(False, f"{what}: {path} exists")
        return
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == PNG_SIGNATURE, f"{what}: PNG signature")
    check(data[12:16] == b"IHDR", f"{what}: IHDR chunk first")
    width, height = struct.unpack(">II", data[16:24])
    check(width >= 400 and height >= 300, f"{what}: size {width}x{height}")
    check(data[-12:-4] == b"\0\0\0\0IEND", f"{what}: IEND chunk last")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image

    image = matplotlib.image.imread(path)
    check(image.shape[:2] == (height, width), f"{what}: matplotlib reads it back")
    check(float(image[..., :3].std()) > 0.01, f"{what}: not a blank image")


def check_error(result, what, expected):
    lines = result.stderr.splitlines()
    check(result.returncode == 2, f"{what}: exit status 2 (got {result.returncode})")
    check(len(lines) == 1, f"{what}: one line on stderr (got {lines!r})")
    check(bool(lines) and expected in lines[0], f"{what}: message mentions {expected!r}")
    check(result.stdout == "", f"{what}: nothing on stdout")


def main():
    with tempfile.TemporaryDirectory(prefix="fiber-plot-test-") as directory:
        log = os.path.join(directory, "run.h5")
        subprocess.run([MAKE_LOG, log, "40"], check=True)

        out = os.path.join(directory, "curve.png")
        result = run(log, "-o", out)
        check(result.returncode == 0, f"default plot exits 0 ({result.stderr.strip()})")
        check_png(out, "default plot")

        result = run(log)  # default output: run.png beside the log
        check(result.returncode == 0, f"default output path ({result.stderr.strip()})")
        check_png(os.path.join(directory, "run.png"), "run.png")

        for x in ("generation", "seconds", "timesteps"):
            out = os.path.join(directory, f"by_{x}.png")
            result = run(log, "-o", out, "--x", x, "--y", "return_mean", "eval_return")
            check(result.returncode == 0, f"--x {x} exits 0 ({result.stderr.strip()})")
            check_png(out, f"--x {x}")

        missing = os.path.join(directory, "missing.h5")
        check_error(run(missing), "missing file", missing)

        checkpoint = os.path.join(directory, "checkpoint.h5")
        subprocess.run([MAKE_LOG, "--checkpoint", checkpoint], check=True)
        check_error(run(checkpoint), "a checkpoint", "not a fiber run log")

        garbage = os.path.join(directory, "garbage.h5")
        with open(garbage, "wb") as f:
            f.write(os.urandom(5000))
        check_error(run(garbage), "garbage", "not an HDF5 file")

        check_error(run(log, "--y", "return_mean", "bogus"), "unknown --y column", "'bogus'")
        check_error(run(log, "--x", "wallclock"), "unknown --x column", "'wallclock'")
        check_error(run(log, "--frobnicate"), "unknown option", "--frobnicate")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    MAKE_LOG, PLOT = sys.argv[1], sys.argv[2]
    sys.exit(main())
