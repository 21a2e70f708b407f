// A lone std::string (the arguments or the result of a task of one string, such as the Python
// front end's calls) encoded without a Boost archive, in the archive's own format: its length as
// a std::size_t, then its characters. Making a binary archive constructs a std::locale (about a
// microsecond, docs/design.md "The Python front end"), which a small task paid four times. Not
// part of the public API.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "fiber/bytes.hpp"

namespace fiber::detail {

template <class... Ts>
constexpr bool kLoneString = sizeof...(Ts) == 1 &&
                             (std::is_same_v<std::remove_cvref_t<Ts>, std::string> && ...);

// Appends to `out`, which may hold many items (a map's): no exact reserve, which would copy the
// whole buffer for every item instead of growing it geometrically.
inline void append_lone_string(Bytes& out, const std::string& value) {
  const std::size_t length = value.size();
  const auto* length_bytes = reinterpret_cast<const char*>(&length);
  out.insert(out.end(), length_bytes, length_bytes + sizeof length);
  out.insert(out.end(), value.begin(), value.end());
}

// Whether `in` is exactly a lone string's encoding; if so, `value` holds the string.
inline bool read_lone_string(std::span<const char> in, std::string& value) {
  std::size_t length = 0;
  if (in.size() < sizeof length) return false;
  std::memcpy(&length, in.data(), sizeof length);
  if (length != in.size() - sizeof length) return false;
  value.assign(in.data() + sizeof length, length);
  return true;
}

}  // namespace fiber::detail
