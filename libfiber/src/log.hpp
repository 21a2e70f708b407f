// The runtime's messages on stderr, one line each, starting with "fiber: ", filtered by level.
// FIBER_LOG_LEVEL (error, warn, info, debug; default warn) sets the level, read once per process
// at its first message; a task process, forked from its worker, keeps the worker's.
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace fiber::log {

enum class Level { error, warn, info, debug };

// Whether a message at `level` is written: checked before a message is formatted.
bool enabled(Level level);

// Writes one line, "fiber: " then `message`, if `level` is enabled.
void write(Level level, std::string_view message);

// Says, in one line, that FIBER_LOG_LEVEL names no level, if so. The master calls it, so that a
// bad value is said once per run rather than once by each of its workers.
void report_rejected_level();

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(Level::error)) write(Level::error, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(Level::warn)) write(Level::warn, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(Level::info)) write(Level::info, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (enabled(Level::debug)) write(Level::debug, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace fiber::log
