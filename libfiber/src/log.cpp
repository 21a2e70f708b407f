#include "log.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace fiber::log {
namespace {

constexpr const char* level_variable = "FIBER_LOG_LEVEL";
constexpr Level default_level = Level::warn;
// The message only: every line reads as the runtime's messages always have, "fiber: ...".
constexpr std::string_view line_pattern = "fiber: %v";

struct LevelName {
  std::string_view name;
  spdlog::level::level_enum spdlog_level;
};
// Indexed by Level.
constexpr std::array<LevelName, 4> level_names{{{"error", spdlog::level::err},
                                                {"warn", spdlog::level::warn},
                                                {"info", spdlog::level::info},
                                                {"debug", spdlog::level::debug}}};

const LevelName& named(Level level) { return level_names[static_cast<std::size_t>(level)]; }

struct Log {
  spdlog::logger logger{"fiber", std::make_shared<spdlog::sinks::stderr_sink_mt>()};
  std::optional<std::string> rejected_setting;  // FIBER_LOG_LEVEL when it names no level

  Log() {
    logger.set_pattern(std::string(line_pattern));
    logger.set_level(named(default_level).spdlog_level);
    const char* setting = std::getenv(level_variable);
    if (!setting) return;
    auto chosen = std::find_if(level_names.begin(), level_names.end(),
                               [&](const LevelName& level) { return level.name == setting; });
    if (chosen == level_names.end()) {
      rejected_setting = setting;
    } else {
      logger.set_level(chosen->spdlog_level);
    }
  }
};

// A function-local static: tasks register (and may log) during static initialization.
Log& the_log() {
  static Log instance;
  return instance;
}

}  // namespace

bool enabled(Level level) { return the_log().logger.should_log(named(level).spdlog_level); }

void write(Level level, std::string_view message) {
  the_log().logger.log(named(level).spdlog_level, message);
}

void report_rejected_level() {
  if (const auto& setting = the_log().rejected_setting) {
    warn("{}='{}' is not a level (error, warn, info or debug); using {}", level_variable, *setting,
         named(default_level).name);
  }
}

}  // namespace fiber::log
