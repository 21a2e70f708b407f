// How fiber-es and fiber-ppo begin their run log: a new one with its metadata, or the log of the
// run a checkpoint continues, cut back to the checkpoint.
#pragma once

#include <fiber/pool.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "storage/run_log.hpp"

namespace fiber::rl {

// Creates the log (replacing a file at `path`) with `columns`, and writes `meta` (key, value)
// and the keys fiber_version and started (UTC). StorageError if it cannot.
RunLog start_run_log(const std::string& path, std::vector<RunLog::Column> columns,
                     const std::vector<std::pair<std::string, std::string>>& meta);

// Opens the log of a resumed run and removes its rows after the first `rows_done` (written after
// the checkpoint). StorageError if it cannot.
RunLog continue_run_log(const std::string& path, std::size_t rows_done);

// The hosts of the pool's workers, each once, comma-separated (the log's "hosts").
std::string host_list(const fiber::Pool& pool);

}  // namespace fiber::rl
