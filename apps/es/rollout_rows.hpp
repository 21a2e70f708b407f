// fiber-es's rollout log (storage/rollout_log.hpp): its columns and a generation's rows, from the
// generation's tasks and what they returned. Tasks are numbered in the generation: the
// perturbations' batches first, then the evaluation episodes of the unperturbed policy.
#pragma once

#include <cstdint>
#include <vector>

#include "evaluation.hpp"
#include "run/rollout_log_start.hpp"
#include "storage/rollout_log.hpp"

namespace fiber::es {

// full: generation, task, noise_index (-1: evaluation), sign (+1, -1; 0: evaluation), episode
// (within the perturbation), return, length, worker, host (index into /meta/hosts),
// task_seconds. summary: generation, task, episodes, timesteps, return_mean, worker, host,
// seconds.
std::vector<rl::RunLog::Column> rollout_columns(rl::RolloutLevel level);

// The rows of generation `generation`: `merged` is the batches' results merged in batch order,
// `evaluation_results` the evaluation tasks' results. std::logic_error if they do not match the
// tasks.
std::vector<rl::RunLog::Row> rollout_rows(rl::RolloutLevel level, std::int64_t generation,
                                          const std::vector<EpisodeBatch>& batches,
                                          int episodes_per_perturbation, const BatchResult& merged,
                                          const std::vector<BatchResult>& evaluation_results,
                                          rl::RolloutLog& log);

}  // namespace fiber::es
