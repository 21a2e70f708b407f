// A memory mapping with one owner, which unmaps it.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <optional>
#include <utility>

namespace fiber::posix {

class MappedRegion {
 public:
  // Zeroed memory shared with the children this process forks from now on (MAP_SHARED |
  // MAP_ANONYMOUS); nothing if mmap failed, with errno saying why.
  static std::optional<MappedRegion> shared_anonymous(std::size_t size) {
    void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) return std::nullopt;
    return MappedRegion(data, size);
  }

  // `size` bytes of the file `fd` (e.g. a memfd another process sent), shared (MAP_SHARED);
  // nothing if mmap failed.
  static std::optional<MappedRegion> shared_file(int fd, std::size_t size) {
    void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) return std::nullopt;
    return MappedRegion(data, size);
  }

  MappedRegion() = default;
  MappedRegion(MappedRegion&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedRegion& operator=(MappedRegion&& other) noexcept {
    if (this == &other) return *this;
    unmap();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  ~MappedRegion() { unmap(); }

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }

 private:
  MappedRegion(void* data, std::size_t size) : data_(data), size_(size) {}
  void unmap() noexcept {
    if (data_) munmap(data_, size_);
    data_ = nullptr;
    size_ = 0;
  }
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fiber::posix
