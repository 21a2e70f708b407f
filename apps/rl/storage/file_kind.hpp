// What a path names when it is not a regular file (a FIFO, a directory, a device), found without
// opening it: open(2) of a FIFO waits for its other end, so a run given one as a file it reads or
// writes would hang there (and a rename over it would replace it silently). The run's files are
// checked with it before anything is opened; the HDF5 layer, the run log, the checkpoint writer
// and the lock refuse such files too.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

namespace fiber::rl {

// "a FIFO", "a directory", "a character device", "a block device", "a socket" ("a special file"
// for any other kind), or "" for a regular file.
std::string_view non_regular_kind(mode_t mode);

// non_regular_kind of what `path` names, symbolic links followed; "" also if nothing is there or
// it cannot be examined (the open that follows says why). Does not open the file.
std::string_view non_regular_kind(const std::filesystem::path& path);

}  // namespace fiber::rl
