#include "storage/rollout_log.hpp"

#include <algorithm>
#include <utility>

namespace fiber::rl {
namespace {

constexpr const char* kHostsKey = "hosts";

std::vector<std::string> split_hosts(const std::string& text) {
  std::vector<std::string> hosts;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    hosts.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return hosts;
}

}  // namespace

std::filesystem::path RolloutLog::path_beside(const std::filesystem::path& run_log,
                                              const char* suffix) {
  return std::filesystem::path(run_log).replace_extension(suffix);
}

RolloutLog::RolloutLog(RunLog log, std::string step_column)
    : log_(std::move(log)), step_column_(std::move(step_column)) {
  if (auto hosts = log_.meta(kHostsKey)) hosts_ = split_hosts(*hosts);
}

RolloutLog RolloutLog::create(const std::filesystem::path& path,
                              std::vector<RunLog::Column> columns, std::string step_column) {
  RunLog log = RunLog::create(path, std::move(columns), RunLog::IfExists::overwrite);
  log.set_meta(kHostsKey, "");
  return RolloutLog(std::move(log), std::move(step_column));
}

RolloutLog RolloutLog::resume(const std::filesystem::path& path,
                              const std::vector<RunLog::Column>& columns, std::string step_column,
                              std::int64_t steps_done) {
  // Read first, so that a refused log is left as it was (opening a compressed log for writing
  // rewrites it uncompressed).
  if (RunLog::open(path, RunLog::Access::read_only).columns() != columns) {
    throw RunLogError("rollout log " + path.string() +
                      ": has other columns (written with another --rollout-log); resume with "
                      "the same --rollout-log, or move the file away");
  }
  RunLog log = RunLog::open(path);
  const std::vector<std::int64_t> steps = log.int64s(step_column);
  const auto first_after = std::lower_bound(steps.begin(), steps.end(), steps_done);
  log.truncate(static_cast<std::size_t>(first_after - steps.begin()));
  return RolloutLog(std::move(log), std::move(step_column));
}

void RolloutLog::append_step(const std::vector<RunLog::Row>& rows) { log_.append_rows(rows); }

std::int64_t RolloutLog::host_index(std::string_view host) {
  const auto found = std::find(hosts_.begin(), hosts_.end(), host);
  if (found != hosts_.end()) return found - hosts_.begin();
  hosts_.emplace_back(host);
  std::string text;
  for (const std::string& name : hosts_) text += (text.empty() ? "" : ",") + name;
  log_.set_meta(kHostsKey, text);
  return static_cast<std::int64_t>(hosts_.size()) - 1;
}

}  // namespace fiber::rl
