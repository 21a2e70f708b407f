// The cost of fiber-es's rollout log per generation: builds a generation's rows from its tasks'
// results exactly as the trainer does (apps/es/rollout_rows.cpp) and appends them
// (storage/rollout_log.hpp), timing both, for --generations generations of --rollouts rollouts.
// Prints one line per measurement; the generation time it is compared with comes from a real
// fiber-es run (benchmarks/rollout_log/rollout_log_cost.sh).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "rollout_rows.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPairsPerTask = 4;      // fiber-es's default
constexpr int kEpisodeLength = 1000;  // Humanoid's time limit: any length costs the same
constexpr int kNoiseTableEntries = 25'000'000;
constexpr int kHosts = 64;
constexpr int kWarmUpGenerations = 1;

// A generation's merged task results and its batches, as es_merge_results would give them.
void make_generation(std::int64_t generation, int rollouts,
                     std::vector<fiber::es::EpisodeBatch>& batches,
                     fiber::es::BatchResult& merged) {
  const int pairs = rollouts / 2;
  batches.clear();
  merged = {};
  merged.generation = generation;
  for (int first = 0; first < pairs; first += kPairsPerTask) {
    fiber::es::EpisodeBatch batch;
    for (int k = first; k < std::min(pairs, first + kPairsPerTask); ++k) {
      batch.noise_indices.push_back((k * 7919LL) % kNoiseTableEntries);
      for (int sign = 0; sign < 2; ++sign) {
        merged.episode_returns.push_back(0.5 * k - sign);
        merged.lengths.push_back(kEpisodeLength);
      }
    }
    merged.task_workers.push_back(static_cast<int>(batches.size()));
    merged.task_hosts.push_back("node" + std::to_string(batches.size() % kHosts));
    merged.task_seconds.push_back(1.0);
    merged.task_episodes.push_back(static_cast<std::int64_t>(batch.noise_indices.size()) * 2);
    batches.push_back(std::move(batch));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int generations = 50;
  int rollouts = 2048;
  std::string output = "rollout_log_cost.rollouts.h5";
  CLI::App app{"Times fiber-es's rollout log: rows built and appended per generation.",
               "rollout_log_cost"};
  app.add_option("--generations", generations)
      ->check(CLI::Range(kWarmUpGenerations + 1, 1'000'000))
      ->capture_default_str();
  app.add_option("--rollouts", rollouts, "rollouts per generation (even)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--output", output)->capture_default_str();
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;

  const auto level = fiber::rl::RolloutLevel::full;
  auto log = fiber::rl::RolloutLog::create(output, fiber::es::rollout_columns(level), "generation");
  std::vector<fiber::es::EpisodeBatch> batches;
  fiber::es::BatchResult merged;
  double build_seconds = 0, write_seconds = 0;
  for (int g = 0; g < generations; ++g) {
    make_generation(g, rollouts, batches, merged);
    const auto started = Clock::now();
    auto rows = fiber::es::rollout_rows(level, g, batches, 1, merged, {}, log);
    const auto built = Clock::now();
    log.append_step(rows);
    if (g < kWarmUpGenerations) continue;  // the hosts' metadata is written once, at first
    write_seconds += std::chrono::duration<double>(Clock::now() - built).count();
    build_seconds += std::chrono::duration<double>(built - started).count();
  }
  const int timed = generations - kWarmUpGenerations;
  log.log().close();
  std::printf(
      "rollout_log_cost: %d generations of %d rollouts: %.3f ms per generation to build the rows, "
      "%.3f ms to append them; %.1f bytes per rollout\n",
      timed, rollouts, 1e3 * build_seconds / timed, 1e3 * write_seconds / timed,
      static_cast<double>(std::filesystem::file_size(output)) / (double(generations) * rollouts));
  return 0;
}
