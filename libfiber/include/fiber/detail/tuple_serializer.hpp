// Boost.Serialization for std::tuple, which Boost 1.74 lacks: the elements in order. Found by
// Boost's own lookup in boost::serialization. Not part of the public API.
#pragma once

#include <tuple>

namespace boost::serialization {

template <class Archive, class... Ts>
void serialize(Archive& archive, std::tuple<Ts...>& tuple, const unsigned int /*version*/) {
  std::apply([&archive](auto&... element) { (archive & ... & element); }, tuple);
}

}  // namespace boost::serialization
