#include "node_array_binding.hpp"

#include <fiber/detail/shared_segment.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace py = pybind11;

namespace fiber::python {
namespace {

using detail::SharedSegment;

// The node's copy of `name`, of `bytes` bytes, mapped; if this process is the node's first,
// `fill(memoryview)` fills it first (a writable view of the segment, with the GIL taken). Waits
// without the GIL: another process of the node may be filling it.
std::shared_ptr<SharedSegment> open_segment(const std::string& name, std::size_t bytes,
                                            const py::object& fill) {
  py::gil_scoped_release unlocked;
  return SharedSegment::open(name, bytes, [&](void* memory) {
    py::gil_scoped_acquire gil;
    fill(py::memoryview::from_memory(memory, static_cast<py::ssize_t>(bytes)));
  });
}

}  // namespace

void bind_node_array(py::module_& module) {
  py::class_<SharedSegment, std::shared_ptr<SharedSegment>>(
      module, "Segment", py::buffer_protocol(),
      "A NodeArray's mapped segment: a read-only buffer of its bytes (numpy.frombuffer).")
      .def_buffer([](const SharedSegment& segment) {
        return py::buffer_info(const_cast<void*>(segment.data()), 1,
                               py::format_descriptor<unsigned char>::format(),
                               static_cast<py::ssize_t>(segment.bytes()), /*readonly=*/true);
      })
      .def_property_readonly("created_here", &SharedSegment::created_here);
  module.def("open_segment", &open_segment, py::arg("name"), py::arg("bytes"), py::arg("fill"),
             "Maps the node's copy of a NodeArray's segment, made and filled by fill(memoryview) "
             "if this process is the node's first.");
}

}  // namespace fiber::python
