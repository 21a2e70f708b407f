// Writes one message at each level through the runtime's log, as the master does at its start
// (after saying whether FIBER_LOG_LEVEL was rejected): tests/log/log_checks.sh reads which appear.
#include "log.hpp"

int main() {
  fiber::log::report_rejected_level();
  fiber::log::error("probe error {}", 1);
  fiber::log::warn("probe warn {}", 2);
  fiber::log::info("probe info {}", 3);
  fiber::log::debug("probe debug {}", 4);
}
