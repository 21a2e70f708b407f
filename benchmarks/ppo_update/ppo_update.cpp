// fiber-ppo's update measured by itself, against its floor: ppo_update (epochs of minibatches:
// the networks' forward and backward passes, the loss, gradient clipping, Adam) on synthetic
// samples of an environment's shapes, and, in the same process, the matrix products of the same
// shapes alone (Eigen GEMMs: each layer's forward product, its weight gradient and, above the
// first layer, the gradient it passes down). CPU time of this process, the smallest of the
// repeats of each, the two measured in turn. With --threads N > 1, the update on N threads
// (fiber-ppo --learner-cores N) is measured too, in turn with the others: its CPU and wall time,
// the wall-time gain over one thread, and whether its parameters equal one thread's bit for bit.
// One CSV line on stdout:
//
//   environment,observations,actions,hidden,parameters,samples,epochs,minibatches,
//   update_seconds,gemm_seconds,gemm_gflops,ratio,
//   update_wall_seconds,threads,threaded_cpu_seconds,threaded_wall_seconds,wall_gain,identical
//
//   ppo_update [--env Humanoid-v5] [--hidden 64 64] [--samples 2048] [--epochs 10]
//              [--minibatches 32] [--repeats 5] [--threads 1] [--header]
#include <Eigen/Core>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "actor_critic.hpp"
#include "command_line.hpp"
#include "cpu_time.hpp"
#include "envs/environment.hpp"
#include "learner.hpp"
#include "policy/adam.hpp"

namespace {

using fiber_benchmarks::process_cpu_seconds;

constexpr double kLearningRate = 3e-4;  // humanoid.toml's; the stepsize does not change the cost
constexpr double kAdamEpsilon = 1e-5;   // fiber-ppo's (CleanRL's)
constexpr double kInitialLogStd = 0.0;
constexpr std::uint64_t kSeed = 1;
constexpr double kGiga = 1e9;
constexpr int kMaxCount = 1'000'000'000;  // of any flag's count: a readable range

struct Flags {
  std::string environment = "Humanoid-v5";
  std::vector<long> hidden{64, 64};
  long samples = 2048;  // humanoid.toml: 8 slots x 256 steps
  int epochs = 10;
  int minibatches = 32;
  int repeats = 5;
  int threads = 1;
  bool header = false;
};

// An iteration's samples drawn from the model itself, as a rollout would make them.
fiber::ppo::Samples synthetic_samples(const fiber::ppo::ActorCritic& model, long observations,
                                      long samples, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  fiber::ppo::Samples s;
  s.observations = Eigen::MatrixXd::NullaryExpr(observations, samples, [&] { return normal(rng); });
  const long actions = model.policy().output_size();
  s.actions.resize(model.discrete() ? 1 : actions, samples);
  s.log_probs.resize(samples);
  for (long b = 0; b < samples; ++b) {
    double log_prob = 0;
    s.actions.col(b) = model.sample(s.observations.col(b), rng, log_prob);
    s.log_probs[b] = log_prob;
  }
  s.advantages = Eigen::VectorXd::NullaryExpr(samples, [&] { return normal(rng); });
  s.values = Eigen::VectorXd::NullaryExpr(samples, [&] { return normal(rng); });
  s.returns = s.values + s.advantages;
  return s;
}

// One update's CPU and wall seconds, and the parameters it leaves.
struct UpdateRun {
  double cpu_seconds = 0, wall_seconds = 0;
  Eigen::VectorXd parameters;
};

UpdateRun run_update(const fiber::ppo::ActorCritic& initial, const fiber::ppo::Samples& samples,
                     const Flags& f, int threads) {
  fiber::ppo::ActorCritic model = initial;
  fiber::rl::Adam adam(model.parameter_count(), kLearningRate, 0.9, 0.999, kAdamEpsilon);
  std::mt19937_64 rng(kSeed);
  const fiber::ppo::UpdateSettings settings{
      .coefficients = {}, .epochs = f.epochs, .minibatches = f.minibatches, .threads = threads};
  const auto wall_started = std::chrono::steady_clock::now();
  const double started = process_cpu_seconds();
  fiber::ppo::ppo_update(model, adam, samples, settings, rng);
  UpdateRun run;
  run.cpu_seconds = process_cpu_seconds() - started;
  run.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_started).count();
  run.parameters = model.parameters();
  return run;
}

// The smallest CPU and wall time of the repeats (each on its own), and the last parameters.
void keep_fastest(UpdateRun& best, UpdateRun run) {
  best.cpu_seconds = std::min(best.cpu_seconds, run.cpu_seconds);
  best.wall_seconds = std::min(best.wall_seconds, run.wall_seconds);
  best.parameters = std::move(run.parameters);
}

// The products of one network's pass over a minibatch, with their operands.
struct LayerProducts {
  Eigen::MatrixXd weights, inputs, outputs, output_gradients, weight_gradients, input_gradients;
  bool passes_gradient_down = false;
};

std::vector<LayerProducts> layer_products(const std::vector<long>& sizes, long batch) {
  std::vector<LayerProducts> layers;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const long in = sizes[l], out = sizes[l + 1];
    layers.push_back({Eigen::MatrixXd::Random(out, in), Eigen::MatrixXd::Random(in, batch),
                      Eigen::MatrixXd(out, batch), Eigen::MatrixXd::Random(out, batch),
                      Eigen::MatrixXd(out, in), Eigen::MatrixXd(in, batch), l > 0});
  }
  return layers;
}

double flops_of(const std::vector<LayerProducts>& layers) {
  double flops = 0;
  for (const auto& layer : layers) {
    const double mac = static_cast<double>(layer.weights.size() * layer.inputs.cols());
    flops += 2 * mac * (layer.passes_gradient_down ? 3 : 2);
  }
  return flops;
}

double gemm_seconds(std::vector<LayerProducts>& layers, long passes) {
  const double started = process_cpu_seconds();
  for (long pass = 0; pass < passes; ++pass) {
    for (auto& layer : layers) {
      layer.outputs.noalias() = layer.weights * layer.inputs;
      layer.weight_gradients.noalias() = layer.output_gradients * layer.inputs.transpose();
      if (layer.passes_gradient_down) {
        layer.input_gradients.noalias() = layer.weights.transpose() * layer.output_gradients;
      }
    }
  }
  return process_cpu_seconds() - started;
}

std::vector<long> network_sizes(long inputs, const std::vector<long>& hidden, long outputs) {
  std::vector<long> sizes{inputs};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(outputs);
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"fiber-ppo's update against the GEMM floor of its shapes", "ppo_update"};
  app.add_option("--env", f.environment, "the environment whose shapes the networks take");
  app.add_option("--hidden", f.hidden, "hidden layer sizes")->check(CLI::Range(1, kMaxCount));
  app.add_option("--samples", f.samples, "samples of an iteration")
      ->check(CLI::Range(1, kMaxCount));
  app.add_option("--epochs", f.epochs, "passes over the samples")->check(CLI::Range(1, kMaxCount));
  app.add_option("--minibatches", f.minibatches, "minibatches per epoch")
      ->check(CLI::Range(1, kMaxCount));
  app.add_option("--repeats", f.repeats, "measurements of each, the smallest kept")
      ->check(CLI::Range(1, kMaxCount));
  app.add_option("--threads", f.threads,
                 "threads of the update measured beside one thread's (fiber-ppo --learner-cores)")
      ->check(CLI::Range(1, kMaxCount));
  app.add_flag("--header", f.header, "print the CSV header first");
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  const long minibatch = f.samples / f.minibatches;
  if (minibatch < 2) {
    std::fprintf(stderr, "ppo_update: --samples / --minibatches leaves fewer than 2 a minibatch\n");
    return 2;
  }
  std::unique_ptr<fiber::rl::Environment> environment;
  try {
    environment = fiber::rl::make_environment(f.environment);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ppo_update: %s\n", error.what());
    return 2;
  }
  const auto& space = environment->action_space();
  const long observations = environment->observation_size();
  const fiber::ppo::ActorCritic model(observations, f.hidden, space.discrete, space.size,
                                      kInitialLogStd, kSeed);
  std::mt19937_64 rng(kSeed);
  const fiber::ppo::Samples samples = synthetic_samples(model, observations, f.samples, rng);

  std::vector<LayerProducts> policy =
      layer_products(network_sizes(observations, f.hidden, space.size), minibatch);
  std::vector<LayerProducts> value =
      layer_products(network_sizes(observations, f.hidden, 1), minibatch);
  const long passes = static_cast<long>(f.epochs) * f.minibatches;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  UpdateRun update{kNone, kNone, {}};
  UpdateRun threaded = update;
  double gemm = kNone;
  for (int r = 0; r < f.repeats; ++r) {
    keep_fastest(update, run_update(model, samples, f, 1));
    if (f.threads > 1) keep_fastest(threaded, run_update(model, samples, f, f.threads));
    gemm = std::min(gemm, gemm_seconds(policy, passes) + gemm_seconds(value, passes));
  }
  if (f.threads == 1) threaded = update;
  const double flops = static_cast<double>(passes) * (flops_of(policy) + flops_of(value));
  std::string hidden;
  for (long size : f.hidden) hidden += (hidden.empty() ? "" : "x") + std::to_string(size);
  if (f.header) {
    std::printf(
        "environment,observations,actions,hidden,parameters,samples,epochs,minibatches,"
        "update_seconds,gemm_seconds,gemm_gflops,ratio,update_wall_seconds,threads,"
        "threaded_cpu_seconds,threaded_wall_seconds,wall_gain,identical\n");
  }
  std::printf("%s,%ld,%ld,%s,%ld,%ld,%d,%d,%.6f,%.6f,%.3f,%.3f,%.6f,%d,%.6f,%.6f,%.3f,%d\n",
              f.environment.c_str(), observations, static_cast<long>(space.size), hidden.c_str(),
              static_cast<long>(model.parameter_count()), f.samples, f.epochs, f.minibatches,
              update.cpu_seconds, gemm, flops / gemm / kGiga, update.cpu_seconds / gemm,
              update.wall_seconds, f.threads, threaded.cpu_seconds, threaded.wall_seconds,
              update.wall_seconds / threaded.wall_seconds,
              threaded.parameters == update.parameters ? 1 : 0);
  return 0;
}
