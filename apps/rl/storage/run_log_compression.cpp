// A run log's file replaced by a copy with other chunk filters: compressed when a run closes it
// cleanly (RunLog::close_compressed), uncompressed again when a writer opens it (appending to
// compressed chunks is not crash-safe: docs/design.md, "Rollout logs").
#include "storage/run_log_impl.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>

#include "storage/atomic_replace.hpp"

namespace fiber::rl {

namespace {

// zlib's default level: on shuffled columns a higher one saves next to nothing, a lower one costs
// bytes (docs/design.md, "Rollout logs").
constexpr unsigned kDeflateLevel = 6;

}  // namespace

bool RunLog::Impl::any_column_compressed() const {
  return std::any_of(datasets.begin(), datasets.end(), [&](const hdf5::Dataset& dataset) {
    return attempt_damaged("cannot read the filters of /log", [&] { return dataset.compressed(); });
  });
}

// Replaces the file by a copy of it whose columns have `filters` (storage/atomic_replace.hpp):
// a crash leaves the old file or the complete copy, and at most PATH.tmp, which the next
// writer removes. The copy reads every chunk with its checksum verified, so a damaged one fails
// it before anything is replaced. Closes the log, also when it fails (the file as it was).
void RunLog::Impl::rewrite(const hdf5::ChunkFilters& filters, const std::string& what) {
  const std::filesystem::path temporary = temporary_beside(path);
  auto give_up = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    try {
      close();
    } catch (const RunLogError&) {  // the rewrite's error is the one to report
    }
    fail(why);
  };
  try {
    hdf5::File copy = hdf5::File::create(temporary);
    hdf5::copy_contents(file, copy, filters);
    copy.flush(H5F_SCOPE_GLOBAL);
    copy.close_or_throw();
  } catch (const hdf5::CopyError& error) {
    const std::string where = error.object() + (error.rows().empty() ? "" : ", " + error.rows());
    if (error.is_checksum_mismatch()) give_up("damaged (checksum mismatch in " + where + ")");
    give_up("cannot " + what + " (" + where + "): " + error.description());
  } catch (const hdf5::Error& error) {
    give_up("cannot " + what + " into " + temporary.string() + ": " + error.description());
  }
  close();  // the old file, before it is replaced
  try {
    replace_durably(temporary, path);
  } catch (const std::system_error& error) {
    give_up("cannot " + what + ": " + error.what());
  }
}

// A copy left by a rewrite that a crash interrupted (this process is the writer now).
void RunLog::Impl::remove_interrupted_rewrite() const {
  std::error_code ignored;
  std::filesystem::remove(temporary_beside(path), ignored);
}

void RunLog::close_compressed() {
  Impl& self = impl();
  self.require_writable("compress");
  self.flush();
  self.rewrite({.deflate_level = kDeflateLevel}, "compress");
}

}  // namespace fiber::rl
