"""Two worker shapes in one job: a pool of actors, one slot each, feeds a learner Process of 2
cores through a Queue, as an RL program's stages do (docs/guide/elasticity.md, "Worker shapes").
The learner is bound to 2 cores of its own, and its thread pools are told so (OMP_NUM_THREADS);
the actors are not bound. Run it:
PYTHONPATH=build/python python3 examples/python/shaped_pools.py
"""

import os

import fiber as mp

ACTORS = 2
EPISODES = 8
LEARNER_CORES = 2
STEPS = 1000  # of an episode


def rollout(episode, experience):
    """An actor's episode: its return goes to the learner through the Queue."""
    episode_return = sum((episode * step) % 7 for step in range(STEPS))
    experience.put((episode, episode_return))
    return episode


def learn(experience, report):
    """The learner: takes every episode's return, then reports what it learnt and ran on."""
    returns = dict(experience.get() for _ in range(EPISODES))
    cores = len(os.sched_getaffinity(0))
    report.put((sum(returns.values()), cores, os.environ.get("OMP_NUM_THREADS")))


experience, report = mp.Queue(), mp.Queue()
learner = mp.Process(target=learn, args=(experience, report), cores=LEARNER_CORES)
learner.start()
with mp.Pool(ACTORS) as actors:
    episodes = actors.starmap(rollout, [(episode, experience) for episode in range(EPISODES)])
total, cores, threads = report.get()
learner.join()
print("actors ran episodes", episodes)
print("learner: total return", total, "on", cores, "cores, OMP_NUM_THREADS", threads)
print("learner exitcode", learner.exitcode)
