// Helpers of the storage tests: a temporary directory, capture of stderr (file descriptor 2),
// running a shell command, and byte-level file surgery.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace fiber::rl::test {

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("fiber-storage-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
             "-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Redirects file descriptor 2 (C stdio, std::cerr, and HDF5's error printing) into a temporary
// file while alive; text() stops the capture and returns what was written.
class StderrCapture {
 public:
  StderrCapture() {
    std::cerr.flush();
    std::fflush(stderr);
    file_ = std::tmpfile();
    if (file_ == nullptr) throw std::runtime_error("tmpfile failed");
    saved_ = ::dup(2);
    ::dup2(::fileno(file_), 2);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  ~StderrCapture() {
    stop();
    if (file_ != nullptr) std::fclose(file_);
  }
  std::string text() {
    stop();
    std::string out;
    std::rewind(file_);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) out.append(buffer, n);
    return out;
  }

 private:
  void stop() {
    if (saved_ < 0) return;
    std::cerr.flush();
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout (and stderr if the command redirects it)
};

// Runs `command` with /bin/sh and collects its standard output.
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A path quoted for /bin/sh.
inline std::string quoted(const std::filesystem::path& path) {
  std::string out = "'";
  for (char c : path.string()) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

inline std::vector<char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Overwrites `count` bytes at `offset` with `value`.
inline void overwrite_bytes(const std::filesystem::path& path, std::uint64_t offset,
                            std::size_t count, unsigned char value) {
  std::vector<char> bytes = read_file(path);
  if (offset + count > bytes.size()) throw std::out_of_range("overwrite past the end");
  for (std::size_t i = 0; i < count; ++i) bytes[offset + i] = static_cast<char>(value);
  write_file(path, bytes);
}

inline void flip_byte(const std::filesystem::path& path, std::uint64_t offset) {
  std::vector<char> bytes = read_file(path);
  if (offset >= bytes.size()) throw std::out_of_range("flip past the end");
  bytes[offset] = static_cast<char>(~static_cast<unsigned char>(bytes[offset]));
  write_file(path, bytes);
}

constexpr const char* kPython = "/usr/bin/python3";

}  // namespace fiber::rl::test
