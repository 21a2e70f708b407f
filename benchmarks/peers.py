"""What the Python peers of fiber's benchmarks share: starting mpi4py with the MPI settings fiber
uses, an IPyParallel cluster that is always stopped, and a hang on purpose for the harness's test.

Imported by the peer scripts in benchmarks/*/ (they put this folder on sys.path). Debian's
/usr/bin/python3 only: python3-mpi4py, python3-ipyparallel.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# What libfiber/src/launch_defaults.cpp sets for a local run (docs/platform.md says why), so
# that mpi4py's spawned workers talk over the same transport as fiber's; the caller's choices win.
FIBER_MPI_DEFAULTS = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_pml": "ucx",
    "OMPI_MCA_pml_ucx_tls": "any",
    "OMPI_MCA_pml_ucx_devices": "any",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "UCX_LOG_FILE": "stderr",  # not among the rows on stdout (docs/platform.md)
}

# Names the framework whose peer hangs on purpose (tests/benchmarks/hung_peer_check.sh).
HANG_ON_PURPOSE = "FIBER_BENCH_HANG"


def hang_if_asked(framework):
    """Hangs forever when $FIBER_BENCH_HANG names `framework`: called with the pool's workers up,
    as mpi4py.futures hung in a PMIx lookup, so that bench.sh has processes to stop."""
    if os.environ.get(HANG_ON_PURPOSE) == framework:
        print(f"{framework}: hanging on purpose ({HANG_ON_PURPOSE})", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)


def set_fiber_mpi_defaults(module_folder):
    """Call before `from mpi4py import MPI` (which initializes MPI). Spawned workers inherit the
    environment of that moment: module_folder goes on their PYTHONPATH, so that they can unpickle
    the task functions of the modules in it."""
    for name, value in FIBER_MPI_DEFAULTS.items():
        os.environ.setdefault(name, value)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [module_folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


@contextlib.contextmanager
def ipyparallel_cluster(engines, start_timeout=120):
    """A local IPyParallel cluster of `engines` engines, profile in a temporary directory; yields
    a connected ipyparallel.Client and stops the cluster whatever happens, Ctrl-C and SIGTERM
    (bench.sh's) included. Says on stderr how many engines are up as they come: bench.sh takes
    a peer that prints nothing for a while as hung."""
    import ipyparallel

    ipython_dir = tempfile.mkdtemp(prefix="fiber-bench-ipython-")
    env = dict(os.environ, IPYTHONDIR=ipython_dir)
    ipcluster = shutil.which("ipcluster") or "/usr/bin/ipcluster"
    profile = ["--profile-dir", os.path.join(ipython_dir, "profile_bench")]
    os.makedirs(profile[1], exist_ok=True)
    previous_term = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cluster = subprocess.Popen([ipcluster, "start", "-n", str(engines), *profile,
                                "--log-level=ERROR"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    client = None
    engines_up = 0
    try:
        deadline = time.monotonic() + start_timeout
        connection_file = os.path.join(profile[1], "security", "ipcontroller-client.json")
        while True:
            try:
                if not os.path.exists(connection_file):  # the Client would print while waiting
                    raise OSError(f"no {connection_file} yet")
                client = ipyparallel.Client(profile_dir=profile[1], timeout=5)
                if len(client.ids) != engines_up:
                    engines_up = len(client.ids)
                    print(f"ipyparallel: {engines_up} of {engines} engines up", file=sys.stderr,
                          flush=True)
                if len(client.ids) >= engines:
                    break
                client.close()
                client = None
            except (OSError, ipyparallel.error.TimeoutError):
                client = None
            if cluster.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"IPyParallel cluster of {engines} engines did not start")
            time.sleep(0.5)
        yield client
    finally:
        if client is not None:
            client.close()
        cluster.send_signal(signal.SIGINT)  # ipcluster stops its engines and controller
        try:
            cluster.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(cluster.pid, signal.SIGKILL)
            cluster.wait()
        signal.signal(signal.SIGTERM, previous_term)
        shutil.rmtree(ipython_dir, ignore_errors=True)
