// fiber._fiber's NodeArray segments (fiber::NodeArray's untyped part, detail::SharedSegment):
// the node's one copy of a read-only array in /dev/shm, mapped by every process of the job on
// the node. fiber/node_array.py gives it a numpy array's face.
#pragma once

#include <pybind11/pybind11.h>

namespace fiber::python {

void bind_node_array(pybind11::module_& module);

}  // namespace fiber::python
