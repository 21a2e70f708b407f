// Replacing a file so that a crash leaves either the old file or the complete new one: the new
// contents go to a temporary file beside it, which is fsynced, renamed over the file (rename(2)
// is atomic) and made durable by an fsync of the directory. Used by the checkpoint writer and by
// RunLog's rewrites (compression at a clean close, decompression on resume).
#pragma once

#include <filesystem>

namespace fiber::rl {

// PATH.tmp: the temporary file the new contents of `path` are written to.
std::filesystem::path temporary_beside(const std::filesystem::path& path);

// fsyncs the file (or, with `directory`, the directory) at `path`. std::system_error if it
// cannot; a directory whose file system cannot fsync directories (EINVAL, EROFS) is accepted.
void fsync_path(const std::filesystem::path& path, bool directory);

// fsyncs `temporary`, renames it over `path` and fsyncs their directory. std::system_error naming
// the step that failed; `temporary` is then still there if the rename was not done.
void replace_durably(const std::filesystem::path& temporary, const std::filesystem::path& path);

}  // namespace fiber::rl
