#include "storage/atomic_replace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

namespace fiber::rl {

std::filesystem::path temporary_beside(const std::filesystem::path& path) {
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  return temporary;
}

void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), "open " + path.string());
  }
  const int result = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); the rename is then as durable as it gets.
  if (result != 0 && !(directory && (saved == EINVAL || saved == EROFS))) {
    throw std::system_error(saved, std::generic_category(), "fsync " + path.string());
  }
}

void replace_durably(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  fsync_path(temporary, false);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "rename " + temporary.string() + " -> " + path.string());
  }
  const std::filesystem::path directory = path.parent_path();
  fsync_path(directory.empty() ? std::filesystem::path(".") : directory, true);
}

}  // namespace fiber::rl
