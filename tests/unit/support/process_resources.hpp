// What this process holds, read from /proc: to check that an object gives back the file
// descriptors and mappings it took.
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

namespace fiber::unit {

inline std::size_t open_file_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

// Mappings of this process whose line in /proc/self/maps names `file`.
inline std::size_t mappings_of(const std::string& file) {
  std::ifstream maps("/proc/self/maps");
  std::size_t count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find(file) != std::string::npos) ++count;
  }
  return count;
}

// Shared anonymous mappings (mmap MAP_SHARED | MAP_ANONYMOUS): "/dev/zero (deleted)" in maps.
inline std::size_t shared_anonymous_mappings() { return mappings_of("/dev/zero (deleted)"); }

// Mappings of task processes' memories (task_memory.hpp: a memfd named fiber-task-process).
inline std::size_t task_memory_mappings() { return mappings_of("/memfd:fiber-task-process"); }

}  // namespace fiber::unit
