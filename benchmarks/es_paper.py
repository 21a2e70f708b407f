"""The Fiber paper's ES scaling experiment (its figure of 50 iterations of OpenAI ES at a
population of 2,048 against the workers): the workload and the times it reports, for the ES
benchmarks (es_scaling's projection, es_real's runs)."""

import math

TASKS = 1024  # the population of 2,048 in tasks of one antithetic pair
ITERATIONS = 50
# Seconds for 50 iterations in the paper, by workers: Fiber, IPyParallel (None: failed).
TIMES = {32: (1475, 1520), 64: (800, 905), 128: (460, 760), 256: (305, 895), 512: (245, 1370),
         1024: (245, None)}
# The time of one task: the paper's 32-worker time taken as ideal (32 tasks per worker per
# iteration), 0.92 s.
TAU = TIMES[32][0] / ITERATIONS * 32 / TASKS


def ideal_generation_seconds(workers, tau=TAU):
    """A generation with nothing but the tasks: ceil(TASKS / workers) tasks back to back."""
    return math.ceil(TASKS / workers) * tau


def paper_generation_seconds(workers):
    """(Fiber, IPyParallel) seconds per iteration in the paper at `workers`, None where it has
    none (not measured, or failed)."""
    fiber, ipyparallel = TIMES.get(workers, (None, None))
    return (fiber / ITERATIONS if fiber else None,
            ipyparallel / ITERATIONS if ipyparallel else None)
