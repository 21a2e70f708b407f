// The exit statuses of fiber-es and fiber-ppo (docs/guide/rl.md "Data safety"): a run that failed,
// and bad input or a file that cannot be used. A stopped run's status is kExitPreempted
// (stop_request.hpp).
#pragma once

namespace fiber::rl {

inline constexpr int kExitError = 1;
inline constexpr int kExitBadInput = 2;

}  // namespace fiber::rl
