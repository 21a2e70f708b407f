// fiber-ppo's rollout logs (storage/rollout_log.hpp): OUTPUT.rollouts.h5, one row per finished
// episode (--rollout-log full), and OUTPUT.tasks.h5, one row per segment task (full and summary).
#pragma once

#include <cstdint>
#include <vector>

#include "rollout.hpp"
#include "storage/rollout_log.hpp"

namespace fiber::ppo {

// iteration, slot, episode (index in the slot), return, length, terminated (1; 0: truncated),
// worker, host (index into /meta/hosts).
std::vector<rl::RunLog::Column> episode_columns();
// iteration, slot, steps, episodes (finished in the segment), worker, host, seconds.
std::vector<rl::RunLog::Column> task_columns();

// An iteration's rows, from its segments (in slot order).
std::vector<rl::RunLog::Row> episode_rows(std::int64_t iteration,
                                          const std::vector<Segment>& segments,
                                          rl::RolloutLog& log);
std::vector<rl::RunLog::Row> task_rows(std::int64_t iteration, const std::vector<Segment>& segments,
                                       rl::RolloutLog& log);

}  // namespace fiber::ppo
