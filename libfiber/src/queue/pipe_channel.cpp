#include "fiber/detail/pipe_channel.hpp"

#include "queue/broker_connection.hpp"
#include "queue/pipe_receiver.hpp"
#include "queue/pipe_sender.hpp"
#include "queue/queue_broker.hpp"
#include "runtime_state.hpp"

namespace fiber::detail {

PipeChannel PipeChannel::create() {
  if (!runtime_live()) made_in_the_master();
  return PipeChannel(queue_broker().create(0));
}

void PipeChannel::send(const Bytes& item) const {
  if (address_.port == 0) made_in_the_master();
  PipeSender::of_this_process().send(address_, item);
}

std::optional<Bytes> PipeChannel::receive(Timeout timeout) const {
  if (address_.port == 0) made_in_the_master();
  return PipeReceiver::of_this_process().receive(address_, timeout, true);
}

bool PipeChannel::poll(Timeout timeout) const {
  if (address_.port == 0) made_in_the_master();
  return PipeReceiver::of_this_process().receive(address_, timeout, false).has_value();
}

}  // namespace fiber::detail
