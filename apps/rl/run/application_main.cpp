#include "run/application_main.hpp"

#include <fmt/format.h>
#include <fiber/fiber.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "run/stop_request.hpp"

namespace fiber::rl {

namespace {

// Prints the exception being handled as one line; returns kExitError.
int report_current_exception(const char* program) {
  std::string what;
  try {
    throw;
  } catch (const std::bad_alloc&) {
    what = "out of memory (std::bad_alloc)";
  } catch (const fiber::TimeoutError& error) {
    what = std::string(error.what()) + "; if tasks really take this long, raise --task-timeout";
  } catch (const std::exception& error) {
    what = error.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  std::replace(what.begin(), what.end(), '\n', ' ');
  std::fputs(fmt::format("{}: error: {}\n", program, what).c_str(), stderr);
  return kExitError;
}

}  // namespace

int application_main(const char* program, int argc, char** argv, const std::function<int()>& run) {
  try {
    fiber::Runtime runtime(argc, argv);
    install_stop_handlers();
    try {
      return run();
    } catch (...) {
      // Reported before the runtime ends (which ends the workers and may take a while).
      return report_current_exception(program);
    }
  } catch (...) {
    return report_current_exception(program);
  }
}

}  // namespace fiber::rl
