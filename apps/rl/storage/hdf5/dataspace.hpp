// hdf5::Dataspace: the shape of a dataset or attribute (scalar, or 1-D and possibly extendible),
// and the selection of a range of it.
#pragma once

#include <vector>

#include "storage/hdf5/handle.hpp"

namespace fiber::rl::hdf5 {

class Dataspace : public Handle {
 public:
  explicit Dataspace(hid_t id);  // takes ownership of a dataspace id (checked)

  static Dataspace scalar();
  // 1-D of `length` elements; extendible without limit if `extendible`.
  static Dataspace vector(hsize_t length, bool extendible = false);

  int rank() const;
  std::vector<hsize_t> dimensions() const;
  hssize_t element_count() const;
  // Selects `count` elements from `first` on (1-D).
  void select_range(hsize_t first, hsize_t count);
};

}  // namespace fiber::rl::hdf5
