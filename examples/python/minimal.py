"""The minimal program of examples/minimal.cpp, in Python: `import fiber as mp` where a
multiprocessing program has `import multiprocessing as mp`. No `if __name__ == "__main__"`:
fiber's workers never run this script."""

import random

import fiber as mp


def rollout(seed, steps):
    """One episode of a toy environment: `steps` coin flips from the random stream `seed`, a
    point for each head. Deterministic: the same seed gives the same return on every worker."""
    coin = random.Random(seed)
    return sum(coin.getrandbits(1) for _ in range(steps))


with mp.Pool(4) as pool:  # 4 workers: Python interpreters started by MPI
    calls = [(1, 1000), (2, 1000), (3, 1000)]
    returns = pool.starmap(rollout, calls)  # ordered
    pending = pool.apply_async(rollout, (7, 1000))  # an AsyncResult
    r = pending.get()  # re-raises a task's exception
    total = sum(pool.imap_unordered(lambda call: rollout(*call), calls))  # as each finishes

print("starmap:", *returns)
print("apply_async:", r)
print("imap_unordered, summed:", total)
