"""A graceful stop: SIGTERM after fiber.exit_on_preemption() ends the program with 75 and no
worker left, and the program started again resumes from its checkpoint (the batch job's cycle
that slurm/python.sbatch and slurm/fiber-job.sh run under Slurm)."""

import pathlib
import signal
import threading
import uuid

from conftest import PROGRAM_TIMEOUT_SECONDS, start_marked_program
from test_programs import processes_marked

import fiber

SEARCH = pathlib.Path(__file__).parents[2] / "examples" / "python" / "resumable_search.py"
# Long enough per round for the signal to come while a round is in flight.
PAUSE_SECONDS = "0.2"


def start_search(checkpoint, mark):
    return start_marked_program(
        [str(SEARCH), "--checkpoint", str(checkpoint), "--pause", PAUSE_SECONDS], mark
    )


def test_sigterm_stops_with_75_and_the_rerun_resumes_where_it_stopped(tmp_path):
    mark = f"fiber-test-{uuid.uuid4()}"
    checkpoint = tmp_path / "search.json"
    first = start_search(checkpoint, mark)
    assert first.stdout.readline().startswith("round 0:")
    first.send_signal(signal.SIGTERM)
    rest, stderr = first.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    assert first.returncode == fiber.PREEMPTED_EXIT, stderr
    assert "Traceback" not in stderr
    assert processes_marked(mark.encode()) == []
    *rounds, stop = ["round 0:"] + rest.splitlines()  # the rounds done before the stop
    assert stop == "fiber: stopped by SIGTERM; run again to resume (exit 75)"
    assert all(line.startswith(f"round {n}:") for n, line in enumerate(rounds))
    done = len(rounds)

    second = start_search(checkpoint, mark)
    output, stderr = second.communicate(timeout=PROGRAM_TIMEOUT_SECONDS)
    assert second.returncode == 0, stderr
    lines = output.splitlines()
    assert lines[0] == f"resumed at round {done}"
    assert [line.split(":")[0] for line in lines[1:-1]] == [
        f"round {n}" for n in range(done, 8)
    ]
    # The same search as one uninterrupted run: the rounds' seeds follow from the checkpoint.
    expected = SEARCH.with_suffix(".expected").read_text().splitlines()
    assert lines[-1] == expected[-1]


def test_exit_on_preemption_needs_the_main_thread():
    errors = []

    def install():
        try:
            fiber.exit_on_preemption()
        except RuntimeError as error:
            errors.append(str(error))

    thread = threading.Thread(target=install)
    thread.start()
    thread.join()
    assert errors == ["fiber.exit_on_preemption() must be called from the main thread"]
