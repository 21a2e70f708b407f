#include "rollout_rows.hpp"

namespace fiber::ppo {

using rl::RunLog;

std::vector<RunLog::Column> episode_columns() {
  using T = RunLog::Type;
  return {{"iteration", T::int64}, {"slot", T::int64},   {"episode", T::int64},
          {"return", T::float64},  {"length", T::int64}, {"terminated", T::int64},
          {"worker", T::int64},    {"host", T::int64}};
}

std::vector<RunLog::Column> task_columns() {
  using T = RunLog::Type;
  return {{"iteration", T::int64}, {"slot", T::int64},   {"steps", T::int64},
          {"episodes", T::int64},  {"worker", T::int64}, {"host", T::int64},
          {"seconds", T::float64}};
}

std::vector<RunLog::Row> episode_rows(std::int64_t iteration, const std::vector<Segment>& segments,
                                      rl::RolloutLog& log) {
  std::vector<RunLog::Row> rows;
  for (const Segment& segment : segments) {
    const std::int64_t host = log.host_index(segment.host);
    for (std::size_t e = 0; e < segment.finished_returns.size(); ++e) {
      rows.push_back({iteration, segment.next.slot, segment.finished_episodes[e],
                      segment.finished_returns[e], segment.finished_lengths[e],
                      static_cast<std::int64_t>(segment.finished_terminated[e]), segment.worker,
                      host});
    }
  }
  return rows;
}

std::vector<RunLog::Row> task_rows(std::int64_t iteration, const std::vector<Segment>& segments,
                                   rl::RolloutLog& log) {
  std::vector<RunLog::Row> rows;
  for (const Segment& segment : segments) {
    rows.push_back({iteration, segment.next.slot, static_cast<std::int64_t>(segment.rewards.size()),
                    static_cast<std::int64_t>(segment.finished_returns.size()), segment.worker,
                    log.host_index(segment.host), segment.seconds});
  }
  return rows;
}

}  // namespace fiber::ppo
