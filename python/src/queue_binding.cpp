#include "queue_binding.hpp"

#include <pybind11/stl.h>
#include <fiber/detail/pipe_channel.hpp>
#include <fiber/detail/queue_channel.hpp>
#include <fiber/serialization.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "interruptible_wait.hpp"

namespace py = pybind11;

namespace fiber::python {
namespace {

using detail::PipeChannel;
using detail::QueueChannel;

Bytes bytes_of(const py::bytes& object) {
  std::string_view view(object);
  return Bytes(view.begin(), view.end());
}

py::bytes as_python(const Bytes& bytes) { return py::bytes(bytes.data(), bytes.size()); }

QueueChannel::Timeout as_timeout(auto slice) {
  return std::chrono::ceil<std::chrono::milliseconds>(slice);
}

// A channel's address as bytes (for pickle) and back.
template <class Channel>
py::bytes address_of(const Channel& channel) {
  Bytes out;
  encode_into(out, channel);
  return as_python(out);
}

template <class Channel>
Channel from_address(const py::bytes& address) {
  Bytes in = bytes_of(address);
  return decode<Channel>(in, "a pickled fiber queue or pipe");
}

QueueChannel make_queue(std::size_t maxsize) {
  py::gil_scoped_release unlocked;  // the first queue starts the broker
  return QueueChannel::create(maxsize);
}

bool put(const QueueChannel& channel, const py::bytes& item, std::optional<double> timeout) {
  std::vector<Bytes> items{bytes_of(item)};
  return wait_interruptibly([&](auto slice) { return channel.put(items, as_timeout(slice)); },
                            timeout);
}

py::object get(const QueueChannel& channel, std::optional<double> timeout) {
  std::vector<Bytes> got;
  bool there = wait_interruptibly(
      [&](auto slice) {
        got = channel.get(1, as_timeout(slice));
        return !got.empty();
      },
      timeout);
  if (!there) return py::none();
  return as_python(got.front());
}

// Up to `most` items already there (none waited for): a JoinableQueue's ledger, drained.
py::list take_all(const QueueChannel& channel, std::size_t most) {
  std::vector<Bytes> got;
  {
    py::gil_scoped_release unlocked;
    got = channel.get(most, detail::kNoWait);
  }
  py::list items;
  for (const auto& item : got) items.append(as_python(item));
  return items;
}

std::size_t size(const QueueChannel& channel) {
  py::gil_scoped_release unlocked;
  return channel.size();
}

void flush_queues() {
  py::gil_scoped_release unlocked;
  QueueChannel().flush();  // every queue this process put to, whichever channel asks
}

PipeChannel make_pipe_direction() {
  py::gil_scoped_release unlocked;
  return PipeChannel::create();
}

void send(const PipeChannel& channel, const py::bytes& item) {
  Bytes bytes = bytes_of(item);
  py::gil_scoped_release unlocked;  // returns once the reading process has it
  channel.send(bytes);
}

py::object receive(const PipeChannel& channel, std::optional<double> timeout) {
  std::optional<Bytes> got;
  bool there = wait_interruptibly(
      [&](auto slice) {
        got = channel.receive(as_timeout(slice));
        return got.has_value();
      },
      timeout);
  if (!there) return py::none();
  return as_python(*got);
}

bool poll(const PipeChannel& channel, std::optional<double> timeout) {
  return wait_interruptibly([&](auto slice) { return channel.poll(as_timeout(slice)); }, timeout);
}

template <class Channel>
auto pickling() {
  return py::pickle([](const Channel& channel) { return address_of(channel); },
                    [](const py::bytes& address) { return from_address<Channel>(address); });
}

}  // namespace

void bind_queues(py::module_& module) {
  py::class_<QueueChannel>(module, "QueueChannel",
                           "A queue of bytes on the master's broker (fiber::detail::QueueChannel).")
      .def(py::init(&make_queue), py::arg("maxsize"))
      .def("put", &put, py::arg("item"), py::arg("timeout"),
           "False if no room came within the timeout (None: waits as long as it takes).")
      .def("get", &get, py::arg("timeout"), "The next item; None if none came within the timeout.")
      .def("take_all", &take_all, py::arg("most"), "Up to `most` items there now, maybe none.")
      .def("size", &size)
      .def(pickling<QueueChannel>());
  py::class_<PipeChannel>(module, "PipeChannel",
                          "One direction of a pipe, bytes to one reading process.")
      .def(py::init(&make_pipe_direction))
      .def("send", &send, py::arg("item"))
      .def("receive", &receive, py::arg("timeout"),
           "The next item; None if none came within the timeout.")
      .def("poll", &poll, py::arg("timeout"))
      .def("reader_starts", &PipeChannel::reader_starts,
           "A Process given this direction's reading end starts (in the master).",
           py::call_guard<py::gil_scoped_release>())
      .def("reader_ended", &PipeChannel::reader_ended,
           "That Process has ended: once all have, unread, sends fail as when a reader ended.",
           py::call_guard<py::gil_scoped_release>())
      .def(pickling<PipeChannel>());
  module.def("flush_queues", &flush_queues,
             "Waits until every item this process put on a queue is in its queue.");
}

}  // namespace fiber::python
