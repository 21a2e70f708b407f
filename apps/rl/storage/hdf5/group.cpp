#include "storage/hdf5/group.hpp"

#include "storage/hdf5/error.hpp"
#include "storage/hdf5/link_info.hpp"
#include "storage/hdf5/property_list.hpp"

namespace fiber::rl::hdf5 {

namespace {

herr_t collect_link(hid_t /*group*/, const char* name, const LinkInfo* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

}  // namespace

Group Group::create(const Group& parent, const char* name, LinkOrder order) {
  const PropertyList gcpl =
      order == LinkOrder::by_creation ? PropertyList::creation_ordered_group() : PropertyList();
  const hid_t creation = gcpl ? gcpl.id() : H5P_DEFAULT;
  return Group(checked_id(H5Gcreate2(parent.id(), name, H5P_DEFAULT, creation, H5P_DEFAULT)),
               H5Gclose);
}

Group Group::open(const Group& parent, const char* name) {
  return Group(checked_id(H5Gopen2(parent.id(), name, H5P_DEFAULT)), H5Gclose);
}

bool Group::contains(const char* name) const { return truth(H5Lexists(id(), name, H5P_DEFAULT)); }

void Group::remove(const char* name) const { check(H5Ldelete(id(), name, H5P_DEFAULT)); }

std::vector<std::string> Group::link_names(LinkOrder order) const {
  std::vector<std::string> names;
  hsize_t index = 0;
  check(H5Literate(id(), order == LinkOrder::by_creation ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME,
                   H5_ITER_INC, &index, collect_link, &names));
  return names;
}

bool Group::holds_dataset(const char* name) const {
  const Handle object(checked_id(H5Oopen(id(), name, H5P_DEFAULT)), H5Oclose);
  return H5Iget_type(object.id()) == H5I_DATASET;
}

}  // namespace fiber::rl::hdf5
