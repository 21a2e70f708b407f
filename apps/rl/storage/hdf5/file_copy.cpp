#include "storage/hdf5/file_copy.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "storage/hdf5/handle.hpp"
#include "storage/hdf5/link_info.hpp"

namespace fiber::rl::hdf5 {

namespace {

Handle owned(hid_t id, Handle::Closer closer) { return Handle(checked_id(id), closer); }

unsigned link_order_flags(const Group& group) {
  const Handle gcpl = owned(H5Gget_create_plist(group.id()), H5Pclose);
  unsigned flags = 0;
  check(H5Pget_link_creation_order(gcpl.id(), &flags));
  return flags;
}

// The group's links in creation order where it keeps an index of that order, else by name.
std::vector<std::string> links_of(const Group& group) {
  return group.link_names((link_order_flags(group) & H5P_CRT_ORDER_INDEXED) != 0
                              ? LinkOrder::by_creation
                              : LinkOrder::by_name);
}

// Creation properties for a copy of `group`: whether it tracks the order of its links. Not the
// group's own (H5Gget_create_plist): they carry its link count, which the copy would start with.
Handle creation_order_of(const Group& group) {
  Handle gcpl = owned(H5Pcreate(H5P_GROUP_CREATE), H5Pclose);
  check(H5Pset_link_creation_order(gcpl.id(), link_order_flags(group)));
  return gcpl;
}

herr_t collect_attribute(hid_t /*object*/, const char* name, const H5A_info_t* /*info*/,
                         void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

bool has_variable_length(const Handle& type) {
  return truth(H5Tdetect_class(type.id(), H5T_VLEN)) || truth(H5Tis_variable_str(type.id()));
}

// Frees what a read of `type` elements allocated in `buffer` (variable-length data).
void reclaim(const Handle& type, const Handle& space, void* buffer) {
  if (!has_variable_length(type)) return;
#if H5_VERSION_GE(1, 12, 0)
  check(H5Treclaim(type.id(), space.id(), H5P_DEFAULT, buffer));
#else
  check(H5Dvlen_reclaim(type.id(), space.id(), H5P_DEFAULT, buffer));
#endif
}

void copy_attributes(hid_t source, hid_t target) {
  std::vector<std::string> names;
  hsize_t index = 0;
  check(H5Aiterate2(source, H5_INDEX_NAME, H5_ITER_INC, &index, collect_attribute, &names));
  for (const std::string& name : names) {
    const Handle attribute = owned(H5Aopen(source, name.c_str(), H5P_DEFAULT), H5Aclose);
    const Handle type = owned(H5Aget_type(attribute.id()), H5Tclose);
    const Handle space = owned(H5Aget_space(attribute.id()), H5Sclose);
    const Handle acpl = owned(H5Aget_create_plist(attribute.id()), H5Pclose);
    const hssize_t elements = H5Sget_simple_extent_npoints(space.id());
    if (elements < 0) throw last_error();
    std::vector<unsigned char> buffer(static_cast<std::size_t>(elements) * H5Tget_size(type.id()));
    check(H5Aread(attribute.id(), type.id(), buffer.data()));
    Handle copy = owned(
        H5Acreate2(target, name.c_str(), type.id(), space.id(), acpl.id(), H5P_DEFAULT), H5Aclose);
    check(H5Awrite(copy.id(), type.id(), buffer.data()));
    reclaim(type, space, buffer.data());
    copy.close_or_throw();
  }
}

std::string rows_text(hsize_t first, hsize_t count) {
  return "rows " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// The data of the chunked dataset `source` into `target` (of the same fixed-size type and shape),
// a slab of whole chunks along the first dimension at a time.
void copy_data(const Handle& source, const Handle& target, const Handle& dcpl,
               const std::string& path) {
  const Handle type = owned(H5Dget_type(source.id()), H5Tclose);
  const Handle file_space = owned(H5Dget_space(source.id()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(file_space.id());
  if (rank <= 0) throw last_error("a chunked dataset without dimensions");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  std::vector<hsize_t> chunk(static_cast<std::size_t>(rank));
  if (H5Sget_simple_extent_dims(file_space.id(), dims.data(), nullptr) < 0) throw last_error();
  if (H5Pget_chunk(dcpl.id(), rank, chunk.data()) < 0) throw last_error();
  hsize_t row_bytes = H5Tget_size(type.id());
  for (int d = 1; d < rank; ++d) row_bytes *= dims[static_cast<std::size_t>(d)];
  if (row_bytes == 0 || dims[0] == 0) return;
  const hsize_t slab_rows =
      std::max<hsize_t>(1, kCopySlabBytes / (row_bytes * chunk[0])) * chunk[0];
  std::vector<unsigned char> buffer;
  for (hsize_t first = 0; first < dims[0]; first += slab_rows) {
    const hsize_t count = std::min(slab_rows, dims[0] - first);
    try {
      std::vector<hsize_t> start(dims.size(), 0);
      std::vector<hsize_t> extent = dims;
      start[0] = first;
      extent[0] = count;
      const Handle memory = owned(H5Screate_simple(rank, extent.data(), nullptr), H5Sclose);
      const Handle read_space = owned(H5Dget_space(source.id()), H5Sclose);
      const Handle write_space = owned(H5Dget_space(target.id()), H5Sclose);
      for (const Handle* space : {&read_space, &write_space}) {
        check(H5Sselect_hyperslab(space->id(), H5S_SELECT_SET, start.data(), nullptr, extent.data(),
                                  nullptr));
      }
      buffer.resize(count * row_bytes);
      check(H5Dread(source.id(), type.id(), memory.id(), read_space.id(), H5P_DEFAULT,
                    buffer.data()));
      check(H5Dwrite(target.id(), type.id(), memory.id(), write_space.id(), H5P_DEFAULT,
                     buffer.data()));
    } catch (const Error& error) {
      throw CopyError(error, path, rows_text(first, count));
    }
  }
}

void copy_dataset(const Group& source, const Group& target, const std::string& name,
                  const std::string& path, const ChunkFilters& filters) {
  const Handle dataset = owned(H5Dopen2(source.id(), name.c_str(), H5P_DEFAULT), H5Dclose);
  const Handle dcpl = owned(H5Dget_create_plist(dataset.id()), H5Pclose);
  const Handle type = owned(H5Dget_type(dataset.id()), H5Tclose);
  // Variable-length data (its chunks hold references to a heap) takes no filters.
  if (H5Pget_layout(dcpl.id()) != H5D_CHUNKED || has_variable_length(type)) {
    check(H5Ocopy(source.id(), name.c_str(), target.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
    return;
  }
  check(H5Premove_filter(dcpl.id(), H5Z_FILTER_ALL));
  if (filters.deflate_level) {
    check(H5Pset_shuffle(dcpl.id()));
    check(H5Pset_deflate(dcpl.id(), *filters.deflate_level));
  }
  check(H5Pset_fletcher32(dcpl.id()));
  const Handle space = owned(H5Dget_space(dataset.id()), H5Sclose);
  Handle copy = owned(H5Dcreate2(target.id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                                 dcpl.id(), H5P_DEFAULT),
                      H5Dclose);
  copy_attributes(dataset.id(), copy.id());
  copy_data(dataset, copy, dcpl, path);
  copy.close_or_throw();
}

void copy_group(const Group& source, const Group& target, const std::string& path,
                const ChunkFilters& filters) {
  copy_attributes(source.id(), target.id());
  for (const std::string& name : links_of(source)) {
    const std::string child = (path == "/" ? "/" : path + "/") + name;
    try {
      LinkInfo link{};
      check(H5Lget_info(source.id(), name.c_str(), &link, H5P_DEFAULT));
      if (link.type == H5L_TYPE_SOFT) {
        std::string value(link.u.val_size, '\0');
        check(H5Lget_val(source.id(), name.c_str(), value.data(), value.size(), H5P_DEFAULT));
        check(H5Lcreate_soft(value.c_str(), target.id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
        continue;
      }
      if (link.type != H5L_TYPE_HARD) {
        throw Error({}, "an external or user-defined link, which is not copied");
      }
      const Handle object = owned(H5Oopen(source.id(), name.c_str(), H5P_DEFAULT), H5Oclose);
      const H5I_type_t kind = H5Iget_type(object.id());
      if (kind == H5I_GROUP) {
        const Group from = Group::open(source, name.c_str());
        const Handle gcpl = creation_order_of(from);
        const Group to(
            checked_id(H5Gcreate2(target.id(), name.c_str(), H5P_DEFAULT, gcpl.id(), H5P_DEFAULT)),
            H5Gclose);
        copy_group(from, to, child, filters);
      } else if (kind == H5I_DATASET) {
        copy_dataset(source, target, name, child, filters);
      } else {
        check(H5Ocopy(source.id(), name.c_str(), target.id(), name.c_str(), H5P_DEFAULT,
                      H5P_DEFAULT));
      }
    } catch (const CopyError&) {
      throw;
    } catch (const Error& error) {
      throw CopyError(error, child, "");
    }
  }
}

}  // namespace

void copy_contents(const File& source, const File& target, const ChunkFilters& filters) {
  try {
    copy_group(Group::open(source, "/"), Group::open(target, "/"), "/", filters);
  } catch (const CopyError&) {
    throw;
  } catch (const Error& error) {
    throw CopyError(error, "/", "");
  }
}

}  // namespace fiber::rl::hdf5
