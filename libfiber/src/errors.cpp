#include "fiber/errors.hpp"

#include <fmt/format.h>

namespace fiber {

TaskError::TaskError(std::string task, std::string type, std::string message, WorkerInfo worker)
    : Error(fmt::format("fiber: task '{}' raised {}: {} (worker {} on {}, pid {})", task, type,
                        message, worker.id, worker.host, worker.pid)),
      task_(std::move(task)),
      type_(std::move(type)),
      message_(std::move(message)),
      worker_(std::move(worker)) {}

}  // namespace fiber
