// The main of fiber-es and fiber-ppo: the fiber runtime first (spawned workers stay in it and
// serve tasks), the stop handlers, then the run. An exception that reaches main, of any type
// (std::bad_alloc, a fiber::Error such as a task's timeout, any std::exception), ends as one
// line "PROGRAM: error: what" on stderr and exit status 1 (kExitError), never std::terminate's
// abort and backtrace.
//
//   int main(int argc, char** argv) {
//     return fiber::rl::application_main("fiber-es", argc, argv,
//                                        [&] { return train(parse_options(argc, argv)); });
//   }
#pragma once

#include <functional>

#include "run/exit_status.hpp"

namespace fiber::rl {

int application_main(const char* program, int argc, char** argv, const std::function<int()>& run);

}  // namespace fiber::rl
