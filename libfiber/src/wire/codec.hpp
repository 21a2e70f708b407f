// The one byte codec of fiber's messages: a writer that appends values, sized byte strings and raw
// bytes to a byte vector, and a reader that takes them back in the same order. A value travels as
// its bytes, in the machine's byte order (one cluster, one architecture: master and workers are
// one binary); a sized string is a u32 size and then its bytes. A reader names what it reads, so
// that bytes cut short (or too long) throw a ProtocolError that says which message they were.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "wire/protocol_error.hpp"

namespace fiber::detail {

// Appends to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<char>& out) : out_(out) {}

  // A trivially copyable value, as its bytes.
  template <class T>
  ByteWriter& value(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::size_t at = grow(sizeof(T));  // first: it may move the bytes
    std::memcpy(out_.data() + at, &value, sizeof(T));
    return *this;
  }
  // Trivially copyable values back to back (an array: its reader knows how many).
  template <class T>
  ByteWriter& values(std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    return raw({reinterpret_cast<const char*>(values.data()), values.size_bytes()});
  }
  // A u32 size, then the bytes.
  ByteWriter& sized(std::span<const char> bytes) {
    value(static_cast<std::uint32_t>(bytes.size()));
    return raw(bytes);
  }
  ByteWriter& string(std::string_view text) { return sized(text); }
  // The bytes alone: the reader knows their size otherwise.
  ByteWriter& raw(std::span<const char> bytes);

  // Room for a T whose value is known only once what follows it is written (a header that counts
  // it): where it lies, for value_at.
  template <class T>
  std::size_t room_for() {
    return grow(sizeof(T));
  }
  template <class T>
  void value_at(std::size_t at, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(out_.data() + at, &value, sizeof(T));
  }

 private:
  // Makes `size` more bytes; where they start. (Out of line, as raw: inlined into a caller that
  // grows a fresh vector piece by piece, vector's growth trips gcc 12's -Warray-bounds.)
  std::size_t grow(std::size_t size);

  std::vector<char>& out_;
};

// Takes values back, front to back, in place.
class ByteReader {
 public:
  // `what` names the bytes in errors ("a lane_kill message"); a literal, it outlives the reader.
  ByteReader(std::span<const char> in, std::string_view what) : in_(in), what_(what) {}

  template <class T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, raw(sizeof(T)).data(), sizeof(T));
    return value;
  }
  // `count` values back to back.
  template <class T>
  std::vector<T> values(std::size_t count) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto bytes = raw(count * sizeof(T));  // first: a count that the bytes do not hold is refused
    std::vector<T> values(count);
    if (count > 0) std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  }
  // A u32 size, then that many bytes (in place).
  std::span<const char> sized() { return raw(value<std::uint32_t>()); }
  std::string string() {
    auto bytes = sized();
    return std::string(bytes.begin(), bytes.end());
  }
  // The next `size` bytes, in place.
  std::span<const char> raw(std::size_t size) {
    if (in_.size() - position_ < size) cut_short();
    auto part = in_.subspan(position_, size);
    position_ += size;
    return part;
  }
  // Everything not taken yet, in place.
  std::span<const char> rest() { return raw(in_.size() - position_); }

  bool at_end() const { return position_ == in_.size(); }
  // A message whose end is known: bytes past it are refused too.
  void expect_end() const {
    if (!at_end()) too_long();
  }

 private:
  [[noreturn]] void cut_short() const;
  [[noreturn]] void too_long() const;

  std::span<const char> in_;
  std::string_view what_;
  std::size_t position_ = 0;
};

// The T at the front of `bytes`, if all of it is there: for a stream whose rest may still come.
template <class T>
std::optional<T> peek_value(std::span<const char> bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

}  // namespace fiber::detail
