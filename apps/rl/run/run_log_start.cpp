#include "run/run_log_start.hpp"

#include <ctime>
#include <set>

namespace fiber::rl {
namespace {

std::string now_text() {
  std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return text;
}

}  // namespace

RunLog start_run_log(const std::string& path, std::vector<RunLog::Column> columns,
                     const std::vector<std::pair<std::string, std::string>>& meta) {
  auto log = RunLog::create(path, std::move(columns), RunLog::IfExists::overwrite);
  for (const auto& [key, value] : meta) log.set_meta(key, value);
  log.set_meta("fiber_version", FIBER_VERSION);
  log.set_meta("started", now_text());
  return log;
}

RunLog continue_run_log(const std::string& path, std::size_t rows_done) {
  auto log = RunLog::open(path);
  log.truncate(rows_done);
  return log;
}

std::string host_list(const fiber::Pool& pool) {
  std::set<std::string> hosts;
  for (const auto& worker : pool.workers()) hosts.insert(worker.host);
  std::string list;
  for (const auto& host : hosts) list += (list.empty() ? "" : ",") + host;
  return list;
}

}  // namespace fiber::rl
