// An actor-learner loop with fiber::Process, Queue and Pipe: 3 actor Processes each take the
// learner's parameter from their Pipe, run an episode with it and put what they saw on one
// shared Queue; the learner (the master) reads the 3 episodes of a round and improves the
// parameter from them. Run it: build/libfiber/fiberrun build/examples/example-actor-learner
#include <fiber/fiber.hpp>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

namespace {

constexpr int kActors = 3;
constexpr int kRounds = 4;
constexpr int kSteps = 1000;
constexpr double kTarget = 0.7;       // the coin bias that pays best
constexpr double kStepSize = 0.5;     // how far the learner moves toward the best actor's bias
constexpr double kExploration = 0.1;  // actor a tries parameter + (a - 1) * kExploration
constexpr double kStop = -1;          // a parameter that ends an actor

struct Episode {
  int actor = 0;
  double bias = 0;
  double episode_return = 0;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& actor& bias& episode_return;
  }
};

// A point for each step whose coin, biased by `bias`, lands as a kTarget-biased coin does.
double run_episode(double bias, unsigned seed) {
  std::mt19937 random(seed);
  std::bernoulli_distribution coin(bias), target(kTarget);
  double points = 0;
  for (int step = 0; step < kSteps; ++step) points += coin(random) == target(random);
  return points;
}

void actor(int id, fiber::Connection<double> learner, fiber::Queue<Episode> experience) {
  for (int round = 0;; ++round) {
    double parameter = learner.recv();
    if (parameter == kStop) return;
    double bias = parameter + (id - 1) * kExploration;
    experience.put({id, bias, run_episode(bias, static_cast<unsigned>(round * kActors + id))});
  }
}

}  // namespace

FIBER_TASK(actor);

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  fiber::Queue<Episode> experience;
  std::vector<fiber::Connection<double>> to_actors;
  std::vector<std::unique_ptr<fiber::Process>> actors;
  for (int id = 0; id < kActors; ++id) {
    auto [learner_end, actor_end] = fiber::Pipe<double>();
    to_actors.push_back(learner_end);
    actors.push_back(std::make_unique<fiber::Process>(actor, id, actor_end, experience));
    actors.back()->start();
  }

  double parameter = 0.3;
  for (int round = 0; round < kRounds; ++round) {
    for (auto& end : to_actors) end.send(parameter);
    Episode best{.actor = kActors};
    for (int episode = 0; episode < kActors; ++episode) {
      Episode seen = experience.get();
      bool better = seen.episode_return > best.episode_return ||
                    (seen.episode_return == best.episode_return && seen.actor < best.actor);
      if (better) best = seen;  // episodes come in any order: ties go to the lower id
    }
    parameter += kStepSize * (best.bias - parameter);
    std::printf("round %d: best actor %d (bias %.2f, return %.0f), parameter now %.3f\n", round,
                best.actor, best.bias, best.episode_return, parameter);
  }
  for (auto& end : to_actors) end.send(kStop);
  for (auto& process : actors) {
    process->join();
    std::printf("actor exitcode %d\n", *process->exitcode());
  }
}
