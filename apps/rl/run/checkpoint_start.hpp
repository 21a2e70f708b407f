// A run's checkpoint before the run writes it: what a file already at --checkpoint may be, and
// the run id that pairs a run log with its checkpoints.
//
// Every run has an id, made when it starts anew and kept when it resumes: the log's metadata
// /meta/run_id and every checkpoint's entry run_id hold it. A run replaces a file at --checkpoint
// only if it is the checkpoint it resumes or one of its own (the same run id), or with
// --overwrite; never a FIFO, a directory or a device. A resumed run continues its log only from a
// checkpoint of the same run: another run's checkpoint given to it (or the log of another run at
// its --output) is refused before anything is written.
#pragma once

#include <string>

#include "storage/checkpoint.hpp"

namespace fiber::rl {

// The name of a run's id: the checkpoint's entry and the run log's metadata key.
inline constexpr const char* kRunIdKey = "run_id";

// A new run's id: 128 random bits as 32 hexadecimal digits.
std::string new_run_id();

// Checks, before anything is written, that the run `run_id` may replace the file at `path` (its
// --checkpoint) with its checkpoints. Nothing there passes, and so does `resumed` (the checkpoint
// the run resumes, "" for a new run) or a checkpoint with this run id; anything else (a file
// that is not a fiber checkpoint, another run's checkpoint, one of a fiber that wrote no run id)
// is refused unless `overwrite`: StorageError, one line saying what to do.
void check_checkpoint_target(const std::string& path, const std::string& resumed,
                             const std::string& run_id, bool overwrite);

// The id of the run resumed from `checkpoint`, whose log is at `log_path`: the checkpoint's, if
// the log's is the same; StorageError (one line: the checkpoint and the log are of two runs)
// otherwise, also if the log has none. For a checkpoint of a fiber that wrote no run id, the
// log's, or a new one (the resumed run writes it into both).
std::string resumed_run_id(const CheckpointReader& checkpoint, const std::string& log_path);

}  // namespace fiber::rl
