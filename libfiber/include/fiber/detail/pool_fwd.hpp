// The library's side of a fiber::Pool, which the Pool holds by pointer and its users never see.
// Not part of the public API.
#pragma once

namespace fiber::detail {

class PoolHandle;     // the dispatcher's side of a pool (libfiber/src/dispatch/pool_handle.hpp)
class ResultHandler;  // the thread that runs callbacks (libfiber/src/caller/result_handler.hpp)

}  // namespace fiber::detail
