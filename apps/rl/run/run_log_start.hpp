// How fiber-es and fiber-ppo begin their files: claim the log and the checkpoint (locks), check
// what a new run would replace, then begin the run log: a new one with its metadata, or the log
// of the run a checkpoint continues, cut back to the checkpoint.
#pragma once

#include <fiber/pool.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "run/command_line.hpp"
#include "storage/file_lock.hpp"
#include "storage/run_log.hpp"

namespace fiber::rl {

// The locks on a run's log and checkpoint, held while the run writes them.
struct RunFileLocks {
  FileLock output;
  FileLock checkpoint;
};

// True if `a` and `b` are one file: the same inode if both exist (hard links, symbolic links),
// otherwise the same path once made absolute and normalized ("./x.h5", "dir/../x.h5").
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// Refuses `path` if it names something other than a regular file (a FIFO, a directory, a
// device; found without opening it): StorageError "WHAT PATH is a FIFO, not a regular file;
// refused: REMEDY". Nothing there, or a regular file, passes.
void refuse_unless_regular(const std::string& what, const std::string& path,
                           const std::string& remedy);

// Claims a run's files before anything is written: refuses --output or --checkpoint naming
// something other than a regular file (a FIFO, whose open would hang, whatever the flags), both
// naming one file (also through other spellings of its path), and files another run holds; then
// locks both (which also proves their folders writable). StorageError, one line.
RunFileLocks claim_run_files(const std::string& output, const std::string& checkpoint);

// A run's files, claimed before anything is written: the locks, and the checkpoint it resumes
// ("" for a new run, whose --output was checked).
struct ClaimedRun {
  RunFileLocks locks;
  std::string resume;
};

// claim_run_files, a line "PROGRAM: ..." on stderr for each stale lock taken over, then the
// checkpoint to resume (a --resume that is not a regular file refused), or for a new run
// check_new_output (its note printed). `columns` are those of this program's log. What may be at
// --checkpoint is checked by the caller once it knows the run (run/checkpoint_start.hpp).
// StorageError, one line.
ClaimedRun claim_run(const char* program, const RunFiles& files, bool overwrite,
                     const std::vector<RunLog::Column>& columns);

// What a run that does not resume does with a file already at its --output.
enum class ExistingOutput {
  refuse,           // any file, an earlier run's log included
  replace_run_log,  // a run log of this program (--resume auto before the first checkpoint)
  replace_any,      // --overwrite
};

// --overwrite replaces anything; --resume auto without a checkpoint yet (a run restarted before
// its first checkpoint) starts a log of this program over; otherwise every file is refused.
ExistingOutput existing_output(bool overwrite, const std::string& resume);

// Checks, before a new run creates anything, that the file at `path` (if any) may be replaced;
// `columns` are those of this program's log. StorageError saying what to do otherwise. Returns
// "" or a line saying which earlier log will be started over.
std::string check_new_output(const std::string& path, const std::vector<RunLog::Column>& columns,
                             ExistingOutput existing);

// Creates the log (replacing a file at `path`) with `columns`, and writes `meta` (key, value)
// and the keys fiber_version and started (UTC). StorageError if it cannot.
RunLog start_run_log(const std::string& path, std::vector<RunLog::Column> columns,
                     const std::vector<std::pair<std::string, std::string>>& meta);

// Opens the log of a run resumed from `checkpoint` and removes its rows after the first
// `rows_done` (written after the checkpoint). StorageError if it cannot, if the log has other
// `columns` (another program's), or if it has fewer rows (the checkpoint is ahead of it).
RunLog continue_run_log(const std::string& path, const std::vector<RunLog::Column>& columns,
                        std::size_t rows_done, const std::string& checkpoint);

// The hosts of the pool's workers, each once, comma-separated (the log's "hosts").
std::string host_list(const fiber::Pool& pool);

}  // namespace fiber::rl
