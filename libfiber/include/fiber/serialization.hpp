/// \file
/// How task arguments and results become bytes.
///
/// Numbers and enums are copied as raw bytes; a lone std::string is written as a Boost archive
/// writes it (detail/lone_string.hpp); everything else goes through a Boost.Serialization
/// binary archive, so any type Boost can serialize works: the standard containers below, std::tuple
/// (detail/tuple_serializer.hpp), and user structs with a `serialize(Archive&, unsigned)` member or
/// free function. Master and workers are the same binary, so the binary format needs no
/// portability.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "fiber/bytes.hpp"
#include "fiber/detail/archive_buffers.hpp"
#include "fiber/detail/lone_string.hpp"
#include "fiber/detail/raw_bytes.hpp"
#include "fiber/detail/tuple_serializer.hpp"
#include "fiber/errors.hpp"

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/deque.hpp>
#include <boost/serialization/list.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/optional.hpp>
#include <boost/serialization/set.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/unordered_map.hpp>
#include <boost/serialization/unordered_set.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

namespace fiber {

/// Appends the encoding of `values` (in order) to `out`.
template <class... Ts>
void encode_into(Bytes& out, const Ts&... values) {
  if constexpr (detail::kAllRawBytes<Ts...>) {
    (
        [&out](const auto& value) {
          const auto* bytes = reinterpret_cast<const char*>(&value);
          out.insert(out.end(), bytes, bytes + sizeof(value));
        }(values),
        ...);
  } else if constexpr (detail::kLoneString<Ts...>) {
    detail::append_lone_string(out, values...);
  } else {
    detail::AppendingStreambuf buffer(out);
    boost::archive::binary_oarchive archive(buffer, detail::kArchiveFlags);
    (archive << ... << values);
  }
}

/// Decodes values of types Ts... (written by encode_into) from `in`, as a tuple. Throws
/// fiber::TypeMismatch, saying that `what` (e.g. "the arguments of task 'f'") does not decode,
/// when the bytes are not of these types: of another size, not an archive of them, or with bytes
/// left over.
template <class... Ts>
std::tuple<Ts...> decode_tuple(std::span<const char> in, std::string_view what = "the bytes") {
  auto mismatch = [&] {
    return TypeMismatch("fiber: " + std::string(what) + " do not decode as the types expected");
  };
  std::tuple<Ts...> values;
  if constexpr (detail::kAllRawBytes<Ts...>) {
    if (in.size() != (sizeof(Ts) + ... + 0)) throw mismatch();
    std::size_t offset = 0;
    std::apply(
        [&](auto&... value) {
          ((std::memcpy(&value, in.data() + offset, sizeof(value)), offset += sizeof(value)), ...);
        },
        values);
  } else if constexpr (detail::kLoneString<Ts...>) {
    if (!detail::read_lone_string(in, std::get<0>(values))) throw mismatch();
  } else {
    detail::SpanStreambuf buffer(in);
    try {
      boost::archive::binary_iarchive archive(buffer, detail::kArchiveFlags);
      std::apply([&archive](auto&... value) { (archive >> ... >> value); }, values);
    } catch (const boost::archive::archive_exception&) {
      throw mismatch();
    } catch (const std::length_error&) {  // a length read from bytes of another type
      throw mismatch();
    } catch (const std::bad_alloc&) {
      throw mismatch();
    }
    if (buffer.in_avail() != 0) throw mismatch();
  }
  return values;
}

/// One value of type T from `in`, as decode_tuple<T> reads it.
template <class T>
T decode(std::span<const char> in, std::string_view what = "the bytes") {
  return std::get<0>(decode_tuple<T>(in, what));
}

}  // namespace fiber
