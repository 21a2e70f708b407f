#include "storage/hdf5/fletcher32.hpp"

#include <algorithm>

namespace fiber::rl::hdf5 {

namespace {

// HDF5's Fletcher32 (H5_checksum_fletcher32): 16-bit big-endian words, sums folded every 360
// words so that they never overflow.
constexpr std::size_t kFletcherBlockWords = 360;

std::uint32_t fold(std::uint32_t sum) { return (sum & 0xffff) + (sum >> 16); }

std::uint32_t fletcher32(const unsigned char* data, std::size_t size) {
  std::uint32_t sum1 = 0, sum2 = 0;
  std::size_t words = size / 2;
  while (words > 0) {
    const std::size_t block = std::min(words, kFletcherBlockWords);
    words -= block;
    for (std::size_t k = 0; k < block; ++k, data += 2) {
      sum1 += static_cast<std::uint32_t>(data[0] << 8 | data[1]);
      sum2 += sum1;
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  if (size % 2 != 0) {
    sum1 += static_cast<std::uint32_t>(data[0] << 8);
    sum2 += sum1;
    sum1 = fold(sum1);
    sum2 = fold(sum2);
  }
  return fold(sum2) << 16 | fold(sum1);
}

}  // namespace

std::uint32_t little_endian_uint32(const unsigned char* bytes) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
         static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
}

bool matches_fletcher32(const unsigned char* data, std::size_t size, std::uint32_t stored) {
  const std::uint32_t sum = fletcher32(data, size);
  const std::uint32_t swapped = (sum & 0x00ff00ff) << 8 | (sum & 0xff00ff00) >> 8;
  return stored == sum || stored == swapped;
}

}  // namespace fiber::rl::hdf5
