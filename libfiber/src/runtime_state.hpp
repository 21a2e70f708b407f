// The one live fiber::Runtime of the master process, for the pools to reach its dispatcher.
#pragma once

#include <memory>
#include <mutex>

#include "dispatch/dispatcher.hpp"
#include "queue/queue_broker.hpp"

namespace fiber::detail {

struct RuntimeState {
  std::unique_ptr<Dispatcher> dispatcher;
  int default_pool_size = 1;
  std::mutex queue_broker_mutex{};
  std::unique_ptr<QueueBroker> queue_broker{};  // the first queue starts it (queue_broker())
};

// Throws fiber::Error if no Runtime is live in this process.
RuntimeState& runtime_state();
bool runtime_live();

}  // namespace fiber::detail
