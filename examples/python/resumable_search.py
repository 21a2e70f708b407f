"""A batch job that survives its time limit: random search whose state is checkpointed after
every round, stopped by SIGTERM (fiber.exit_on_preemption) and resumed from the checkpoint when
it is started again. slurm/python.sbatch runs such a script; slurm/fiber-job.sh requeues a job
that exits with fiber.PREEMPTED_EXIT (75).

    python3 examples/python/resumable_search.py --checkpoint search.json
"""

import argparse
import json
import os
import random
import time

import fiber

TARGET = [3.0, -1.0, 0.5, 2.0]  # the minimum of the function searched
CANDIDATES_PER_ROUND = 16
STEP = 0.5  # spread of the first round's candidates around the starting point
SHRINK = 0.8  # each round's spread over the one before


def loss(point):
    return sum((x - t) ** 2 for x, t in zip(point, TARGET))


def candidate(best, spread, seed, pause):
    """A point near `best` drawn from the stream `seed`, and its loss; `pause` stands for a real
    evaluation's cost (a rollout)."""
    draw = random.Random(seed)
    point = [x + draw.gauss(0.0, spread) for x in best]
    time.sleep(pause)
    return loss(point), point


def search_round(pool, state, pause):
    """The best of the candidates around the best point so far, and of that point itself."""
    first_seed = state["round"] * CANDIDATES_PER_ROUND
    spread = STEP * SHRINK ** state["round"]
    calls = [(state["best"], spread, first_seed + i, pause) for i in range(CANDIDATES_PER_ROUND)]
    best_loss, best = min(pool.starmap(candidate, calls) + [(loss(state["best"]), state["best"])])
    return {"round": state["round"] + 1, "best": best}, best_loss


def save(path, state):
    """Written beside, then renamed: a stop while writing leaves the previous checkpoint whole."""
    with open(path + ".tmp", "w") as file:
        json.dump(state, file)
    os.replace(path + ".tmp", path)


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--checkpoint", help="state file: read if it exists, written every round")
parser.add_argument("--rounds", type=int, default=8)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--pause", type=float, default=0.0, help="seconds per evaluation")
options = parser.parse_args()

fiber.exit_on_preemption()
state = {"round": 0, "best": [0.0] * len(TARGET)}
if options.checkpoint and os.path.exists(options.checkpoint):
    with open(options.checkpoint) as file:
        state = json.load(file)
    print(f"resumed at round {state['round']}", flush=True)

try:
    with fiber.Pool(options.workers) as pool:
        while state["round"] < options.rounds:
            state, best_loss = search_round(pool, state, options.pause)
            with fiber.deferred_preemption():  # a round saved is a round printed
                if options.checkpoint:
                    save(options.checkpoint, state)
                print(f"round {state['round'] - 1}: loss {best_loss:.4f}", flush=True)
except fiber.Preempted as stop:  # the round in flight is abandoned: the checkpoint has the last
    print(stop, flush=True)
    raise
print(f"done: loss {loss(state['best']):.4f} after {state['round']} rounds")
