"""An actor-learner loop with fiber.Process, Queue and Pipe, as examples/actor_learner.cpp: a
learner in the master fits the weights of a linear model to a hidden one; each actor Process
takes the current weights from its Pipe, measures the model's error on samples of its own (its
"experience") and puts the gradient it found on one shared Queue. The learner averages the
actors' gradients of a round and sends the next weights. No `if __name__ == "__main__"`: fiber's
workers never run this script. Run it:
PYTHONPATH=build/python python3 examples/python/actor_learner.py
"""

import random

import fiber as mp

ACTORS = 3
ROUNDS = 30
SAMPLES = 64  # per actor and round
LEARNING_RATE = 0.2
HIDDEN_WEIGHTS = (2.0, -1.0, 0.5)  # what the learner should find
PRINT_EVERY = 10


def gradient(weights, seed):
    """The mean squared error's gradient and value on SAMPLES points from the random stream
    `seed`: the same seed gives the same numbers on any worker."""
    samples = random.Random(seed)
    grad, loss = [0.0] * len(weights), 0.0
    for _ in range(SAMPLES):
        x = [samples.uniform(-1, 1) for _ in weights]
        error = sum(w * xi for w, xi in zip(weights, x)) - sum(
            h * xi for h, xi in zip(HIDDEN_WEIGHTS, x)
        )
        loss += error * error / SAMPLES
        grad = [g + 2 * error * xi / SAMPLES for g, xi in zip(grad, x)]
    return grad, loss


def actor(actor_id, learner, experience):
    """Runs in a Process: each round, weights in from the Pipe and a gradient out on the Queue."""
    for round_number in range(ROUNDS):
        weights = learner.recv()
        grad, loss = gradient(weights, seed=round_number * ACTORS + actor_id)
        experience.put((actor_id, grad, loss))


experience = mp.Queue()
to_actors, actors = [], []
for actor_id in range(ACTORS):
    learner_end, actor_end = mp.Pipe()
    to_actors.append(learner_end)
    actors.append(mp.Process(target=actor, args=(actor_id, actor_end, experience)))
    actors[-1].start()

weights = [0.0] * len(HIDDEN_WEIGHTS)
for round_number in range(ROUNDS):
    for end in to_actors:
        end.send(weights)
    # Gradients come in any order: summed in actor order, so that the sums are the same bits.
    seen = sorted(experience.get() for _ in range(ACTORS))
    loss = sum(actor_loss for _, _, actor_loss in seen) / ACTORS
    for _, grad, _ in seen:
        weights = [w - LEARNING_RATE * g / ACTORS for w, g in zip(weights, grad)]
    if round_number % PRINT_EVERY == 0 or round_number == ROUNDS - 1:
        print(f"round {round_number:2d}: loss {loss:.4f}, weights", [round(w, 3) for w in weights])

for process in actors:
    process.join()
    print(process.name, "exitcode", process.exitcode)
print("hidden weights", list(HIDDEN_WEIGHTS))
