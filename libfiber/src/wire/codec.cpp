#include "wire/codec.hpp"

#include <fmt/format.h>

namespace fiber::detail {

std::size_t ByteWriter::grow(std::size_t size) {
  std::size_t at = out_.size();
  out_.resize(at + size);
  return at;
}

ByteWriter& ByteWriter::raw(std::span<const char> bytes) {
  out_.insert(out_.end(), bytes.begin(), bytes.end());
  return *this;
}

void ByteReader::cut_short() const {
  throw ProtocolError(fmt::format("fiber: {} was cut short", what_));
}

void ByteReader::too_long() const {
  std::size_t left = in_.size() - position_;
  throw ProtocolError(
      fmt::format("fiber: {} has {} byte{} past its end", what_, left, left == 1 ? "" : "s"));
}

}  // namespace fiber::detail
