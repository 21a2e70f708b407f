"""A graceful stop for batch jobs: SIGTERM (Slurm's time-limit or preemption signal) raises
fiber.Preempted in the main thread, a SystemExit whose code is 75.

    fiber.exit_on_preemption()
    state = load_checkpoint() or fresh_state()
    while not done(state):
        state = step(pool, state)      # a SIGTERM here abandons the step in flight
        with fiber.deferred_preemption():
            save_checkpoint(state)     # a SIGTERM here is handled after the block
            print_progress(state)

Uncaught, Preempted ends the program as sys.exit(75) does: the atexit hooks run, so fiber's pools
are terminated and no worker is left. slurm/fiber-job.sh requeues a job that exits with 75, and
the requeued job starts the same script again, which resumes from its last checkpoint. 75 is
EX_TEMPFAIL of <sysexits.h>, the status of fiber's C++ applications stopped the same way
(apps/rl/run/stop_request.hpp).

Python's own default for SIGTERM ends the process at once, without atexit hooks; fiber does not
change it unless asked, as multiprocessing does not.
"""

import contextlib
import signal
import threading

PREEMPTED_EXIT = 75


class Preempted(SystemExit):
    """SIGTERM arrived after exit_on_preemption(): the program should stop now and be rerun."""

    def __init__(self, signal_name="SIGTERM"):
        super().__init__(PREEMPTED_EXIT)
        self.signal_name = signal_name

    def __str__(self):
        return f"fiber: stopped by {self.signal_name}; run again to resume (exit {PREEMPTED_EXIT})"


def _raise_preempted(signum, _frame):
    raise Preempted(signal.Signals(signum).name)


def exit_on_preemption():
    """From now on SIGTERM raises Preempted in the main thread, also during a pool's wait (fiber's
    waits let Python handle signals every 100 ms). Call it from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("fiber.exit_on_preemption() must be called from the main thread")
    signal.signal(signal.SIGTERM, _raise_preempted)


@contextlib.contextmanager
def deferred_preemption():
    """SIGTERM held back while the block runs and handled after it: what a checkpoint saves and
    what the program says it saved stay together (both, or neither, before the stop)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
