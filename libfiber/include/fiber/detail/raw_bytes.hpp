// Which values fiber/serialization.hpp copies as their raw bytes instead of through a Boost
// archive: numbers and enums. Not part of the public API.
#pragma once

#include <type_traits>

namespace fiber::detail {

template <class T>
constexpr bool kRawBytes = std::is_arithmetic_v<T> || std::is_enum_v<T>;

template <class... Ts>
constexpr bool kAllRawBytes = (kRawBytes<std::remove_cvref_t<Ts>> && ...);

}  // namespace fiber::detail
