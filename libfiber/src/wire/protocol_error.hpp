// The error of bytes that are not what this process's peer should have sent.
#pragma once

#include "fiber/errors.hpp"

namespace fiber::detail {

// A peer sent bytes that are not a message of fiber's protocols (a bug, or memory gone bad): that
// peer is not to be trusted, the others are not affected.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

}  // namespace fiber::detail
