#include "storage/file_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "storage/file_kind.hpp"

namespace fiber::rl {
namespace {

using std::filesystem::path;

// Rounds of link-or-take-over before giving up: each round that finds a stale lock moves it aside;
// more rounds only happen when other processes take over the same stale lock at the same moment.
constexpr int kAttempts = 4;
constexpr std::size_t kHostNameBytes = 256;  // Linux's HOST_NAME_MAX is 64
constexpr std::string_view kSlurmJobTag = "slurm-job=";

struct Owner {
  std::string host;
  long pid = 0;
  std::string slurm_job;  // SLURM_JOB_ID of the owner, if it ran in a Slurm job
};

std::string this_host() {
  char name[kHostNameBytes] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

bool alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

std::string this_slurm_job() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return job != nullptr ? job : "";
}

// "host pid" or "host pid slurm-job=ID".
std::string text_of(const Owner& owner) {
  std::string text = owner.host + " " + std::to_string(owner.pid);
  if (!owner.slurm_job.empty()) text.append(" ").append(kSlurmJobTag).append(owner.slurm_job);
  return text.append("\n");
}

std::optional<Owner> parse(const std::string& text) {
  std::istringstream in(text);
  Owner owner;
  if (!(in >> owner.host >> owner.pid) || owner.pid <= 0) return std::nullopt;
  std::string job;
  if (in >> job && job.starts_with(kSlurmJobTag)) owner.slurm_job = job.substr(kSlurmJobTag.size());
  return owner;
}

// Why the lock of `owner` may be taken over by `self`, or "" if it may not: its process is gone
// (this host), or, on another host, it was an earlier start of our own Slurm job (requeued after
// its node failed: a job runs once at a time).
std::string stale_because(const Owner& owner, const Owner& self) {
  if (owner.host == self.host) return alive(owner.pid) ? "" : "no such process";
  if (!self.slurm_job.empty() && owner.slurm_job == self.slurm_job) {
    return "an earlier start of Slurm job " + self.slurm_job;
  }
  return "";
}

// False if the file cannot be read (e.g. it no longer exists).
bool read_text(const path& file, std::string& text) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream content;
  content << in.rdbuf();
  text = content.str();
  return true;
}

// Creates `file` (which must not exist) holding `text`; on failure returns errno's value.
int write_new_file(const path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int error = 0;
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    error = errno != 0 ? errno : EIO;
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) ::unlink(file.c_str());
  return error;
}

[[noreturn]] void fail(const path& target, const std::string& what) {
  throw StorageError(target.string() + ": " + what);
}

}  // namespace

std::filesystem::path FileLock::lock_path(const std::filesystem::path& target) {
  return target.string() + ".lock";
}

FileLock FileLock::acquire(const std::filesystem::path& target) {
  using std::filesystem::path;
  const path lock = lock_path(target);
  const Owner self{this_host(), static_cast<long>(::getpid()), this_slurm_job()};
  const std::string text = text_of(self);
  // Written in full under a name of our own first, so that the lock never exists half-written.
  const path ours(lock.string() + "." + self.host + "." + std::to_string(self.pid));
  ::unlink(ours.c_str());  // left by an earlier process of our pid that was killed
  if (const int error = write_new_file(ours, text); error != 0) {
    fail(target, "cannot create the lock file " + lock.string() + " (" + std::strerror(error) +
                     "; is the folder missing or not writable?)");
  }
  auto give_up = [&](const std::string& what) {
    ::unlink(ours.c_str());
    fail(target, what);
  };
  std::string note;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (::link(ours.c_str(), lock.c_str()) == 0) {
      ::unlink(ours.c_str());
      return FileLock(lock, text, note);
    }
    if (errno != EEXIST) {
      give_up(std::string("cannot create the lock file ") + lock.string() + " (" +
              std::strerror(errno) + ")");
    }
    if (!non_regular_kind(lock).empty()) {  // a FIFO's open would wait for a writer
      give_up("locked by " + lock.string() +
              ", which is not a fiber lock file (remove it if no run uses the file)");
    }
    std::string held;
    if (!read_text(lock, held)) continue;  // released meanwhile
    const std::optional<Owner> owner = parse(held);
    if (!owner) {
      give_up("locked by " + lock.string() +
              ", which is not a fiber lock file (remove it if no run uses the file)");
    }
    const std::string reason = stale_because(*owner, self);
    if (reason.empty()) {
      give_up("in use by another run (host " + owner->host + ", pid " + std::to_string(owner->pid) +
              "; lock file " + lock.string() + ": if that run is over, remove it)");
    }
    // Stale. Move it aside and check that what moved is what we read: another process may have
    // taken it over in between, and its fresh lock then goes back.
    const path stale(ours.string() + ".stale");
    if (::rename(lock.c_str(), stale.c_str()) != 0) continue;
    std::string moved;
    const bool was_stale = read_text(stale, moved) && moved == held;
    if (!was_stale) ::link(stale.c_str(), lock.c_str());
    ::unlink(stale.c_str());
    if (was_stale) {
      note = "took over the stale lock " + lock.string() + " of pid " + std::to_string(owner->pid) +
             " on " +
             (owner->host == self.host ? std::string("this host") : "host " + owner->host) + " (" +
             reason + ")";
    }
  }
  ::unlink(ours.c_str());
  fail(target, "cannot take the lock " + lock.string() +
                   " (other processes are taking it at the same moment)");
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::exchange(other.path_, {})),
      owner_(std::move(other.owner_)),
      takeover_note_(std::move(other.takeover_note_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::exchange(other.path_, {});
    owner_ = std::move(other.owner_);
    takeover_note_ = std::move(other.takeover_note_);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() noexcept {
  if (path_.empty()) return;
  std::string held;
  if (read_text(path_, held) && held == owner_) ::unlink(path_.c_str());
  path_.clear();
}

}  // namespace fiber::rl
