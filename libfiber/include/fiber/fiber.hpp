/// \file
/// Everything of fiber's public API.
#pragma once

#include "fiber/async_result.hpp"
#include "fiber/bytes.hpp"
#include "fiber/errors.hpp"
#include "fiber/node_array.hpp"
#include "fiber/pipe.hpp"
#include "fiber/pool.hpp"
#include "fiber/process.hpp"
#include "fiber/queue.hpp"
#include "fiber/result_stream.hpp"
#include "fiber/runtime.hpp"
#include "fiber/serialization.hpp"
#include "fiber/task.hpp"
