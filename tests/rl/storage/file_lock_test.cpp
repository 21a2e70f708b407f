// FileLock on real files: the lock file's text, refusal of a second owner (another process),
// takeover of a dead process's lock, another host's lock, a missing folder.
#include "storage/file_lock.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

namespace fiber::rl {
namespace {

using test::TempDir;

std::string host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Our lock's text: "host pid", and " slurm-job=ID" inside a Slurm job.
std::string own_text() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return host() + " " + std::to_string(::getpid()) +
         (job != nullptr ? std::string(" slurm-job=") + job : "") + "\n";
}

std::string text_of(const std::filesystem::path& file) {
  const auto bytes = test::read_file(file);
  return {bytes.begin(), bytes.end()};
}

// The pid of a process that has exited (and been reaped).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST(FileLock, HoldsHostAndPidUntilReleased) {
  TempDir dir;
  const auto target = dir / "log.h5";
  {
    FileLock lock = FileLock::acquire(target);
    EXPECT_EQ(lock.path(), dir / "log.h5.lock");
    EXPECT_EQ(text_of(lock.path()), own_text());
    EXPECT_EQ(lock.takeover_note(), "");
    FileLock moved = std::move(lock);
    EXPECT_TRUE(std::filesystem::exists(dir / "log.h5.lock"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "log.h5.lock"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator{}),
            0)
      << "temporary files left";
}

TEST(FileLock, AnotherProcessIsRefusedWithHostAndPid) {
  TempDir dir;
  const auto target = dir / "ckpt.h5";
  FileLock lock = FileLock::acquire(target);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    try {
      FileLock second = FileLock::acquire(target);
      ::_exit(3);
    } catch (const StorageError& error) {
      const std::string message = error.what();
      if (::write(pipe_fds[1], message.data(), message.size()) < 0) ::_exit(4);
      ::_exit(0);
    }
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) message.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the second process took the lock";
  EXPECT_EQ(message, target.string() + ": in use by another run (host " + host() + ", pid " +
                         std::to_string(::getpid()) + "; lock file " + target.string() +
                         ".lock: if that run is over, remove it)");
  EXPECT_EQ(text_of(lock.path()), own_text());
}

TEST(FileLock, StaleLockOfADeadProcessIsTakenOver) {
  TempDir dir;
  const auto target = dir / "log.h5";
  const pid_t dead = dead_pid();
  std::ofstream(FileLock::lock_path(target)) << host() << " " << dead << "\n";
  FileLock lock = FileLock::acquire(target);
  EXPECT_EQ(lock.takeover_note(), "took over the stale lock " + lock.path().string() + " of pid " +
                                      std::to_string(dead) + " on this host (no such process)");
  EXPECT_EQ(text_of(lock.path()), own_text());
}

TEST(FileLock, AnotherHostsLockAndForeignFilesAreRefused) {
  TempDir dir;
  std::ofstream(dir / "a.h5.lock") << "node-elsewhere 77\n";
  try {
    FileLock::acquire(dir / "a.h5");
    ADD_FAILURE() << "another host's lock was taken";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find("(host node-elsewhere, pid 77;"), std::string::npos)
        << error.what();
  }
  std::ofstream(dir / "b.h5.lock") << "not a lock\n";
  EXPECT_THROW(FileLock::acquire(dir / "b.h5"), StorageError);
  EXPECT_EQ(text_of(dir / "a.h5.lock"), "node-elsewhere 77\n");  // left alone
  EXPECT_EQ(text_of(dir / "b.h5.lock"), "not a lock\n");
}

// A FIFO where the lock file would be is refused as a foreign file, without waiting in open(2)
// for a writer to the FIFO.
TEST(FileLock, AFifoAsTheLockFileIsRefusedAtOnce) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "a.h5.lock").c_str(), 0644), 0);
  try {
    FileLock::acquire(dir / "a.h5");
    ADD_FAILURE() << "a FIFO was taken as a lock";
  } catch (const StorageError& error) {
    EXPECT_NE(std::string(error.what()).find("which is not a fiber lock file"), std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "a.h5.lock"));
}

// A Slurm job requeued after its node failed finds the lock of its earlier start, of another host.
TEST(FileLock, EarlierStartOfTheSameSlurmJobIsTakenOver) {
  TempDir dir;
  const char* outer = std::getenv("SLURM_JOB_ID");
  const std::string saved = outer != nullptr ? outer : "";
  ::setenv("SLURM_JOB_ID", "4321", 1);
  std::ofstream(dir / "a.h5.lock") << "node-failed 77 slurm-job=4321\n";
  std::ofstream(dir / "b.h5.lock") << "node-busy 78 slurm-job=999\n";
  std::string note, refusal;
  try {
    note = FileLock::acquire(dir / "a.h5").takeover_note();
    FileLock::acquire(dir / "b.h5");
  } catch (const StorageError& error) {
    refusal = error.what();
  }
  if (outer != nullptr) {
    ::setenv("SLURM_JOB_ID", saved.c_str(), 1);
  } else {
    ::unsetenv("SLURM_JOB_ID");
  }
  EXPECT_EQ(note, "took over the stale lock " + (dir / "a.h5.lock").string() +
                      " of pid 77 on host node-failed (an earlier start of Slurm job 4321)");
  EXPECT_NE(refusal.find("in use by another run (host node-busy, pid 78;"), std::string::npos)
      << refusal;
}

TEST(FileLock, MissingFolderIsOneLine) {
  TempDir dir;
  try {
    FileLock::acquire(dir / "missing" / "log.h5");
    ADD_FAILURE() << "locked in a missing folder";
  } catch (const StorageError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos);
    EXPECT_NE(message.find("cannot create the lock file"), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

TEST(FileLock, ReleaseLeavesALockThatIsNoLongerOurs) {
  TempDir dir;
  FileLock lock = FileLock::acquire(dir / "log.h5");
  std::ofstream(lock.path(), std::ios::trunc) << "other-host 5\n";  // removed and retaken
  lock.release();
  EXPECT_EQ(text_of(dir / "log.h5.lock"), "other-host 5\n");
}

}  // namespace
}  // namespace fiber::rl
