"""Evolution Strategies on CartPole with fiber: OpenAI-ES (Salimans et al., 2017) as the fiber
paper runs it. Each generation is one pool.map over perturbations: a worker evaluates the
policy pushed both ways along one noise vector (antithetic sampling), and the master steps the
policy with Adam along the returns' centered ranks. The noise vectors are slices of one noise
table, a fiber.NodeArray: one copy per node that every worker reads in place, while a task's
arguments carry only an index into it. Fixed seeds make every run the same. No
`if __name__ == "__main__"`: fiber's workers never run this script."""

import math

import numpy as np

import fiber

# CartPole-v1 as gymnasium defines it (the cart-pole of Barto, Sutton and Anderson, 1983).
GRAVITY, MASS_POLE, TOTAL_MASS, HALF_LENGTH = 9.8, 0.1, 1.1, 0.5  # masses: cart 1.0 + pole
FORCE, TAU, MAX_STEPS = 10.0, 0.02, 500  # push (N), Euler step (s), steps of an episode
THETA_LIMIT, X_LIMIT = 12 * 2 * math.pi / 360, 2.4  # the episode ends past 12 degrees or 2.4 m
SOLVED_RETURN = 475  # CartPole-v1's reward threshold

NOISE_VALUES, NOISE_SEED = 1_000_000, 123  # the noise table: 4 MB of float32
PAIRS, SIGMA, LEARNING_RATE = 16, 0.1, 0.05  # antithetic pairs per generation, noise scale, Adam
ADAM_BETAS, ADAM_EPSILON = (0.9, 0.999), 1e-8
EVALUATION_EPISODES, MAX_GENERATIONS, SEED = 10, 50, 0
WORKERS = 4


def episode(weights, seed):
    """The return of one episode (1 per step, the last one included) of the linear policy that
    pushes right when observation @ weights > 0, from gymnasium's start: the state's four values
    uniform in [-0.05, 0.05]."""
    x, x_dot, theta, theta_dot = np.random.default_rng(seed).uniform(-0.05, 0.05, 4)
    for step in range(MAX_STEPS):
        force = FORCE if np.array([x, x_dot, theta, theta_dot]) @ weights > 0 else -FORCE
        cos, sin = math.cos(theta), math.sin(theta)
        push = (force + MASS_POLE * HALF_LENGTH * theta_dot**2 * sin) / TOTAL_MASS
        theta_acc = (GRAVITY * sin - cos * push) / (
            HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * cos**2 / TOTAL_MASS)
        )
        x_acc = push - MASS_POLE * HALF_LENGTH * theta_acc * cos / TOTAL_MASS
        x, x_dot = x + TAU * x_dot, x_dot + TAU * x_acc  # Euler, as gymnasium's default
        theta, theta_dot = theta + TAU * theta_dot, theta_dot + TAU * theta_acc
        if abs(x) > X_LIMIT or abs(theta) > THETA_LIMIT:
            return step + 1
    return MAX_STEPS


def fill_noise(table):
    """The noise table's values: the same on every node that makes a copy."""
    table[:] = np.random.default_rng(NOISE_SEED).standard_normal(table.size, dtype=np.float32)


noise = fiber.NodeArray(shape=NOISE_VALUES, dtype=np.float32, fill=fill_noise, name="noise")


def evaluate_pair(weights, index, seed):
    """Returns of the policy pushed along +noise and -noise, on the same episode (the task's
    closure carries `noise` as its name: the worker reads the node's copy)."""
    epsilon = SIGMA * noise[index : index + weights.size]
    return episode(weights + epsilon, seed), episode(weights - epsilon, seed)


def centered_ranks(returns):
    """Each return's rank scaled to [-0.5, 0.5]: the update ignores the returns' scale."""
    ranks = np.empty(returns.size)
    ranks[returns.ravel().argsort(kind="stable")] = np.arange(returns.size)
    return (ranks / (returns.size - 1) - 0.5).reshape(returns.shape)


weights, rng = np.zeros(4), np.random.default_rng(SEED)
moments = [np.zeros(4), np.zeros(4)]
solved_at, evaluation = None, 0.0
with fiber.Pool(WORKERS) as pool:
    for generation in range(1, MAX_GENERATIONS + 1):
        indexes = rng.integers(0, NOISE_VALUES - weights.size, PAIRS)
        seeds = rng.integers(0, 2**31, PAIRS)
        pairs = pool.starmap(evaluate_pair, [(weights, i, s) for i, s in zip(indexes, seeds)])
        ranks = centered_ranks(np.array(pairs, dtype=float))  # (PAIRS, 2): +noise, -noise
        epsilons = np.stack([noise[i : i + weights.size] for i in indexes])
        gradient = (ranks[:, 0] - ranks[:, 1]) @ epsilons / (2 * PAIRS * SIGMA)
        for moment, beta, value in zip(moments, ADAM_BETAS, (gradient, gradient**2)):
            moment *= beta
            moment += (1 - beta) * value
        corrected = [m / (1 - beta**generation) for m, beta in zip(moments, ADAM_BETAS)]
        weights = weights + LEARNING_RATE * corrected[0] / (np.sqrt(corrected[1]) + ADAM_EPSILON)
        first_seed = generation * EVALUATION_EPISODES  # episodes no perturbation saw
        evaluation_seeds = range(first_seed, first_seed + EVALUATION_EPISODES)
        evaluation = np.mean(pool.map(lambda seed: episode(weights, seed), evaluation_seeds))
        if evaluation >= SOLVED_RETURN:
            solved_at = generation
            break

print(f"noise table: {len(noise)} float32 values, one copy per node")
print("solved:", solved_at is not None)
print("generation:", solved_at)
print(f"evaluation: mean return {evaluation:.1f} over {EVALUATION_EPISODES} episodes")
