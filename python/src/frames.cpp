#include "frames.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace fiber::python {
namespace {

using Length = std::uint64_t;

// A lone frame up to this size is handed over as bytes, copied: cheaper than the memoryview and
// the exporter that keep a string alive (a small call or outcome is most of what a pool of small
// tasks moves; a copy of 4 KiB costs about what making those objects does).
constexpr std::size_t kSmallFrame = 4096;

std::size_t aligned(std::size_t offset) {
  return (offset + kFrameAlignment - 1) / kFrameAlignment * kFrameAlignment;
}

std::size_t table_size(std::size_t count) { return aligned(sizeof(Length) * (count + 1)); }

// A frame's bytes, held for the copy.
class FrameBuffer {
 public:
  explicit FrameBuffer(py::handle frame) {
    if (PyObject_GetBuffer(frame.ptr(), &view_, PyBUF_ANY_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw py::type_error(std::string("fiber: a frame must be a contiguous buffer, not ") +
                           Py_TYPE(frame.ptr())->tp_name);
    }
  }
  ~FrameBuffer() {
    if (view_.obj) PyBuffer_Release(&view_);
  }
  FrameBuffer(FrameBuffer&& other) noexcept : view_(other.view_) { other.view_.obj = nullptr; }
  FrameBuffer(const FrameBuffer&) = delete;
  FrameBuffer& operator=(const FrameBuffer&) = delete;
  FrameBuffer& operator=(FrameBuffer&&) = delete;

  const char* data() const { return static_cast<const char*>(view_.buf); }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

// The joined string, owned by the memoryviews of its frames (through their exporter).
class JoinedFrames {
 public:
  explicit JoinedFrames(std::string bytes) : bytes_(std::move(bytes)) {}
  py::buffer_info buffer() {
    return py::buffer_info(bytes_.data(), 1, py::format_descriptor<std::uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(bytes_.size())}, {py::ssize_t{1}},
                           /*readonly=*/false);
  }

 private:
  std::string bytes_;
};

Length read_length(const std::string& joined, std::size_t index) {
  Length value = 0;
  std::memcpy(&value, joined.data() + index * sizeof(Length), sizeof value);
  return value;
}

}  // namespace

std::string join_frames(py::handle frames) {
  auto sequence = py::reinterpret_borrow<py::sequence>(frames);
  std::vector<FrameBuffer> buffers;
  buffers.reserve(sequence.size());
  for (py::handle frame : sequence) buffers.emplace_back(frame);
  std::size_t size = table_size(buffers.size());
  for (const auto& buffer : buffers) size = aligned(size + buffer.size());
  std::string joined(size, '\0');
  auto write_length = [&](std::size_t index, Length value) {
    std::memcpy(joined.data() + index * sizeof(Length), &value, sizeof value);
  };
  write_length(0, buffers.size());
  std::size_t offset = table_size(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    write_length(i + 1, buffers[i].size());
    std::memcpy(joined.data() + offset, buffers[i].data(), buffers[i].size());
    offset = aligned(offset + buffers[i].size());
  }
  return joined;
}

py::list split_frames(std::string joined) {
  auto cut_short = [] {
    return std::invalid_argument("fiber: the frames of a call are cut short");
  };
  if (joined.size() < sizeof(Length)) throw cut_short();
  const Length count = read_length(joined, 0);
  if (count > joined.size() / sizeof(Length) || table_size(count) > joined.size()) {
    throw cut_short();
  }
  if (count == 1 && joined.size() <= table_size(1) + kSmallFrame) {
    const Length length = read_length(joined, 1);
    if (length > joined.size() - table_size(1)) throw cut_short();
    py::list frames(1);
    frames[0] = py::bytes(joined.data() + table_size(1), length);
    return frames;
  }
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // offset, length
  std::size_t offset = table_size(count);
  for (Length i = 0; i < count; ++i) {
    const Length length = read_length(joined, i + 1);
    if (length > joined.size() - offset) throw cut_short();
    spans.emplace_back(offset, length);
    offset = std::min(aligned(offset + length), joined.size());
  }
  py::object owner = py::cast(JoinedFrames(std::move(joined)));
  py::memoryview whole(owner);
  py::list frames;
  for (const auto& [start, length] : spans) {
    PyObject* slice = PySequence_GetSlice(whole.ptr(), static_cast<py::ssize_t>(start),
                                          static_cast<py::ssize_t>(start + length));
    if (!slice) throw py::error_already_set();
    frames.append(py::reinterpret_steal<py::object>(slice));
  }
  return frames;
}

void bind_frames(py::module_& module) {
  py::class_<JoinedFrames>(module, "_JoinedFrames", py::buffer_protocol(),
                           "The string that the memoryviews of split frames share.")
      .def_buffer(&JoinedFrames::buffer);
}

}  // namespace fiber::python
