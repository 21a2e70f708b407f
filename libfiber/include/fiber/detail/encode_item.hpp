// One value's encoding in Bytes of its own: what a Queue puts and a Pipe sends. Not part of the
// public API.
#pragma once

#include <cstring>

#include "fiber/detail/raw_bytes.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

template <class T>
Bytes encode_item(const T& item) {
  if constexpr (kRawBytes<T>) {  // as encode_into writes it, without growing an empty vector
    Bytes bytes(sizeof item);
    std::memcpy(bytes.data(), &item, sizeof item);
    return bytes;
  } else {
    Bytes bytes;
    encode_into(bytes, item);
    return bytes;
  }
}

}  // namespace fiber::detail
