#include "reduction/partial_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "posix/unique_fd.hpp"
#include "posix/write_all.hpp"
#include "run_identity.hpp"
#include "this_process.hpp"

namespace fiber::detail::partial_store {
namespace {

constexpr const char* kFolder = "/dev/shm";
constexpr const char* kPrefix = "fiber-partial.";

std::string run_prefix() { return kPrefix + run_identity() + "."; }

std::string path_of(const std::string& reduction, std::uint32_t chunk) {
  return fmt::format("{}/{}{}.{}.{}", kFolder, run_prefix(), this_process().host, reduction, chunk);
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(fmt::format("fiber: a reduction's partial result: {} {}: {}", what, path,
                                       std::strerror(errno)));
}

}  // namespace

void write(const std::string& reduction, std::uint32_t chunk, std::span<const char> value) {
  std::string path = path_of(reduction, chunk);
  std::string temporary = path + ".writing";
  {
    posix::UniqueFd file(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (file.get() < 0) fail("cannot create", temporary);
    if (!posix::write_all(file.get(), value)) {
      int error = errno;
      ::unlink(temporary.c_str());
      errno = error;
      fail("cannot write (is /dev/shm full?)", temporary);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("cannot rename to", path);
}

std::optional<Bytes> read(const std::string& reduction, std::uint32_t chunk) {
  std::string path = path_of(reduction, chunk);
  posix::UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("cannot open", path);
  }
  struct stat status {};
  if (fstat(file.get(), &status) != 0) fail("cannot stat", path);
  Bytes value(static_cast<std::size_t>(status.st_size));
  std::size_t done = 0;
  while (done < value.size()) {
    ssize_t n = ::read(file.get(), value.data() + done, value.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done != value.size()) {
    errno = EIO;
    fail("was cut short", path);
  }
  return value;
}

void remove(const std::string& reduction, std::uint32_t chunk) {
  ::unlink(path_of(reduction, chunk).c_str());
}

void remove_all_of_run() {
  std::error_code error;
  std::string prefix = run_prefix();
  for (const auto& entry : std::filesystem::directory_iterator(kFolder, error)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ::unlink(entry.path().c_str());
  }
}

}  // namespace fiber::detail::partial_store
