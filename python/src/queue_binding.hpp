// fiber._fiber.QueueChannel and PipeChannel: fiber's untyped queues and pipe directions
// (detail/queue_channel.hpp, detail/pipe_channel.hpp) carrying the pickled objects of the Python
// classes fiber.Queue and fiber.Connection (python/fiber/queues.py, connection.py). Every wait
// releases the GIL and can be interrupted by Ctrl-C; a channel pickles as its address.
#pragma once

#include <pybind11/pybind11.h>

namespace fiber::python {

void bind_queues(pybind11::module_& module);

}  // namespace fiber::python
