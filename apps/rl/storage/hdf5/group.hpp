// hdf5::Group: a group of links (a File is the root group of its file): its links by name or by
// creation order, its sub-groups, and what a link points to. An HDF5 failure throws hdf5::Error.
#pragma once

#include <string>
#include <vector>

#include "storage/hdf5/handle.hpp"

namespace fiber::rl::hdf5 {

enum class LinkOrder { by_name, by_creation };

class Group : public Handle {
 public:
  Group() = default;
  Group(hid_t id, Closer closer) : Handle(id, closer) {}

  // A new group `name` in `parent`; LinkOrder::by_creation makes it remember the order of its
  // links (so that they can be listed in it).
  static Group create(const Group& parent, const char* name, LinkOrder order = LinkOrder::by_name);
  static Group open(const Group& parent, const char* name);

  bool contains(const char* name) const;
  // Removes the link `name`.
  void remove(const char* name) const;
  // The names of the links, in `order` (by_creation only if the group tracks it).
  std::vector<std::string> link_names(LinkOrder order) const;
  // True if the link `name` leads to a dataset (false for a group or a named type).
  bool holds_dataset(const char* name) const;
};

}  // namespace fiber::rl::hdf5
