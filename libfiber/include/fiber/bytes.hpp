/// \file
/// fiber::Bytes: what values become to cross a process (a task's arguments and result, a queue's
/// item), and what fiber::Call carries.
#pragma once

#include <vector>

namespace fiber {

/// An encoded value (fiber/serialization.hpp).
using Bytes = std::vector<char>;

}  // namespace fiber
