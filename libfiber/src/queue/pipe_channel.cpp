#include "fiber/detail/pipe_channel.hpp"

#include "queue/broker_connection.hpp"
#include "queue/pipe_receiver.hpp"
#include "queue/pipe_sender.hpp"
#include "queue/process_read_ends.hpp"
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

void PipeChannel::reader_starts() const { queue_broker().pipe_reader_starts(address_.id); }

void PipeChannel::reader_ended() const {
  // After the runtime's end nobody sends any more.
  if_queue_broker_runs([&](QueueBroker& broker) { broker.pipe_reader_ended(address_.id); });
}

void PipeChannel::note_read_end(const PipeChannel& direction) {
  if (auto* collected = read_ends_collected()) collected->push_back(direction);
}

std::vector<PipeChannel>*& read_ends_collected() {
  thread_local std::vector<PipeChannel>* collected = nullptr;
  return collected;
}

}  // namespace fiber::detail
