// A call's or an outcome's frames in one std::string, and back without a copy: frame 0 is a
// pickle, the others its out-of-band buffers (pickle protocol 5: a numpy array's data). Joining
// copies each frame once, into the string fiber sends; splitting hands Python memoryviews of a
// string it takes over, which keep it alive and are writeable (numpy's arrays over them too, as
// multiprocessing's results are); a small call or outcome of one frame comes as bytes instead.
//
// Layout: the frame count and each frame's length (little-endian u64 each), then the frames,
// each starting at a multiple of kFrameAlignment.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

namespace fiber::python {

// A string's data is as aligned as malloc's (16 bytes here), and so are the frames within it:
// numpy's ALIGNED flag for any dtype (complex128 and longdouble need 16).
inline constexpr std::size_t kFrameAlignment = 16;

// The frames (a sequence of C- or Fortran-contiguous buffers: bytes, PickleBuffer) joined.
// Throws pybind11::type_error for anything else. Called with the GIL held.
std::string join_frames(pybind11::handle frames);

// The frames of `joined`, which they take over, as a list of memoryviews (a lone small frame: as
// bytes, copied). Throws
// std::invalid_argument if it is not what join_frames makes. Called with the GIL held.
pybind11::list split_frames(std::string joined);

// The class of the memoryviews' exporter, fiber._fiber._JoinedFrames.
void bind_frames(pybind11::module_& module);

}  // namespace fiber::python
