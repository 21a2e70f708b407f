// FileLock: a run's exclusive claim on a file (its log, its checkpoint), as a lock file of fiber's
// own beside it, `PATH.lock`, holding the owner's host and pid ("host 1234"; in a Slurm job
// "host 1234 slurm-job=567"). It does not depend
// on HDF5's file locking, which is off with HDF5_USE_FILE_LOCKING=FALSE (routine on NFS/Lustre).
//
//   FileLock lock = FileLock::acquire("runs/a/log.h5");  // or StorageError naming host and pid
//   if (!lock.takeover_note().empty()) std::fprintf(stderr, "%s\n", lock.takeover_note().c_str());
//
// Taken atomically: the lock's text is written to a file of a unique name, then link(2)ed to
// PATH.lock, which fails if the lock exists (atomic on NFS too). A lock whose owner is a process
// of this host that no longer exists, or an earlier start of this Slurm job (requeued after its
// node failed), is stale and taken over (takeover_note() says so); another lock of another host
// cannot be checked and is refused. Released by the destructor, only if still ours;
// a process killed outright leaves the lock, which its host's next run takes over.
#pragma once

#include <filesystem>
#include <string>

#include "storage/error.hpp"

namespace fiber::rl {

class FileLock {
 public:
  // Locks `target` (which need not exist). StorageError, one line naming the file: in use by
  // another process (its host and pid), the lock file cannot be created (e.g. the folder is
  // missing or not writable), or something else is at PATH.lock (a file that is not a fiber
  // lock, a FIFO: never opened).
  static FileLock acquire(const std::filesystem::path& target);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // PATH.lock for `target`.
  static std::filesystem::path lock_path(const std::filesystem::path& target);

  const std::filesystem::path& path() const { return path_; }
  // "" or one line saying which stale lock (host, pid) was taken over.
  const std::string& takeover_note() const { return takeover_note_; }

  // Removes the lock file now if it is still ours.
  void release() noexcept;

 private:
  FileLock(std::filesystem::path path, std::string owner, std::string note)
      : path_(std::move(path)), owner_(std::move(owner)), takeover_note_(std::move(note)) {}

  std::filesystem::path path_;  // the lock file; empty once released or moved from
  std::string owner_;           // our text in it
  std::string takeover_note_;
};

}  // namespace fiber::rl
