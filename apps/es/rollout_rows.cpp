#include "rollout_rows.hpp"

#include <numeric>
#include <stdexcept>

namespace fiber::es {
namespace {

using rl::RunLog;

// An episode of a task as the task ran it: which perturbation, which member, which episode.
struct Episode {
  std::int64_t noise_index;
  int sign;
  int episode;
};

// The episodes of a batch in the order es_evaluate runs them.
std::vector<Episode> batch_episodes(const EpisodeBatch& batch, int episodes_per_perturbation) {
  std::vector<Episode> episodes;
  for (std::int64_t index : batch.noise_indices) {
    if (index < 0) {
      episodes.push_back({index, 0, 0});
      continue;
    }
    for (int j = 0; j < episodes_per_perturbation; ++j) {
      episodes.push_back({index, +1, j});
      episodes.push_back({index, -1, j});
    }
  }
  return episodes;
}

// Appends the rows of the tasks in `result` (numbered from `first_task`, episodes as `tasks`).
void add_rows(rl::RolloutLevel level, std::int64_t generation, std::int64_t first_task,
              const std::vector<std::vector<Episode>>& tasks, const BatchResult& result,
              rl::RolloutLog& log, std::vector<RunLog::Row>& rows) {
  const std::size_t task_count = result.task_episodes.size();
  if (task_count != tasks.size() || result.task_workers.size() != task_count ||
      result.task_hosts.size() != task_count || result.task_seconds.size() != task_count ||
      result.episode_returns.size() != result.lengths.size()) {
    throw std::logic_error("fiber-es: the tasks' results do not match the generation's tasks");
  }
  std::size_t episode = 0;
  for (std::size_t t = 0; t < task_count; ++t) {
    const auto count = static_cast<std::size_t>(result.task_episodes[t]);
    if (count != tasks[t].size() || episode + count > result.lengths.size()) {
      throw std::logic_error("fiber-es: a task returned another number of episodes than it ran");
    }
    const std::int64_t task = first_task + static_cast<std::int64_t>(t);
    const std::int64_t host = log.host_index(result.task_hosts[t]);
    const int worker = result.task_workers[t];
    const double seconds = result.task_seconds[t];
    if (level == rl::RolloutLevel::summary) {
      const auto from = static_cast<std::ptrdiff_t>(episode);
      const auto to = static_cast<std::ptrdiff_t>(episode + count);
      const std::int64_t steps = std::accumulate(result.lengths.begin() + from,
                                                 result.lengths.begin() + to, std::int64_t{0});
      const double total = std::accumulate(result.episode_returns.begin() + from,
                                           result.episode_returns.begin() + to, 0.0);
      rows.push_back({generation, task, static_cast<std::int64_t>(count), steps,
                      total / static_cast<double>(count), worker, host, seconds});
      episode += count;
    } else {
      for (std::size_t k = 0; k < count; ++k, ++episode) {
        const Episode& e = tasks[t][k];
        rows.push_back({generation, task, e.noise_index, e.sign, e.episode,
                        result.episode_returns[episode], result.lengths[episode], worker, host,
                        seconds});
      }
    }
  }
}

}  // namespace

std::vector<RunLog::Column> rollout_columns(rl::RolloutLevel level) {
  using T = RunLog::Type;
  if (level == rl::RolloutLevel::summary) {
    return {{"generation", T::int64}, {"task", T::int64},          {"episodes", T::int64},
            {"timesteps", T::int64},  {"return_mean", T::float64}, {"worker", T::int64},
            {"host", T::int64},       {"seconds", T::float64}};
  }
  return {{"generation", T::int64},    {"task", T::int64},    {"noise_index", T::int64},
          {"sign", T::int64},          {"episode", T::int64}, {"return", T::float64},
          {"length", T::int64},        {"worker", T::int64},  {"host", T::int64},
          {"task_seconds", T::float64}};
}

std::vector<RunLog::Row> rollout_rows(rl::RolloutLevel level, std::int64_t generation,
                                      const std::vector<EpisodeBatch>& batches,
                                      int episodes_per_perturbation, const BatchResult& merged,
                                      const std::vector<BatchResult>& evaluation_results,
                                      rl::RolloutLog& log) {
  std::vector<RunLog::Row> rows;
  std::vector<std::vector<Episode>> tasks;
  for (const EpisodeBatch& batch : batches) {
    tasks.push_back(batch_episodes(batch, episodes_per_perturbation));
  }
  add_rows(level, generation, 0, tasks, merged, log, rows);
  auto task = static_cast<std::int64_t>(batches.size());
  int evaluation = 0;
  for (const BatchResult& result : evaluation_results) {
    add_rows(level, generation, task++, {{{-1, 0, evaluation++}}}, result, log, rows);
  }
  return rows;
}

}  // namespace fiber::es
