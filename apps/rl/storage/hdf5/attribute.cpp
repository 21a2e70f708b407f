#include "storage/hdf5/attribute.hpp"

#include <algorithm>

#include "storage/hdf5/dataspace.hpp"
#include "storage/hdf5/datatype.hpp"
#include "storage/hdf5/error.hpp"

namespace fiber::rl::hdf5 {

namespace {

class Attribute : public Handle {
 public:
  explicit Attribute(hid_t id) : Handle(checked_id(id), H5Aclose) {}
  static Attribute open(const Handle& object, const char* name) {
    return Attribute(H5Aopen(object.id(), name, H5P_DEFAULT));
  }
  static Attribute create(const Handle& object, const char* name, hid_t type) {
    return Attribute(
        H5Acreate2(object.id(), name, type, Dataspace::scalar().id(), H5P_DEFAULT, H5P_DEFAULT));
  }
  Datatype type() const { return Datatype(H5Aget_type(id())); }
  void write(hid_t memory_type, const void* data) const {
    check(H5Awrite(id(), memory_type, data));
  }
  void read(hid_t memory_type, void* data) const { check(H5Aread(id(), memory_type, data)); }
};

}  // namespace

bool has_attribute(const Handle& object, const char* name) {
  return truth(H5Aexists(object.id(), name));
}

void write_attribute(const Handle& object, const char* name, std::string_view value) {
  if (has_attribute(object, name)) check(H5Adelete(object.id(), name));
  const Datatype type = Datatype::fixed_string(value.size());
  Attribute attribute = Attribute::create(object, name, type.id());
  std::string padded(value);
  padded.resize(std::max<std::size_t>(value.size(), 1), '\0');
  attribute.write(type.id(), padded.data());
  attribute.close_or_throw();
}

void write_attribute(const Handle& object, const char* name, std::int64_t value) {
  Attribute attribute = has_attribute(object, name)
                            ? Attribute::open(object, name)
                            : Attribute::create(object, name, H5T_STD_I64LE);
  attribute.write(H5T_NATIVE_INT64, &value);
  attribute.close_or_throw();
}

std::optional<std::string> read_string_attribute(const Handle& object, const char* name) {
  if (!has_attribute(object, name)) return std::nullopt;
  const Attribute attribute = Attribute::open(object, name);
  const Datatype type = attribute.type();
  if (!type.is_fixed_string()) return std::nullopt;
  std::string text(type.size(), '\0');
  attribute.read(type.id(), text.data());
  text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
  return text;
}

std::optional<std::int64_t> read_int64_attribute(const Handle& object, const char* name) {
  if (!has_attribute(object, name)) return std::nullopt;
  const Attribute attribute = Attribute::open(object, name);
  if (attribute.type().type_class() != H5T_INTEGER) return std::nullopt;
  std::int64_t value = 0;
  attribute.read(H5T_NATIVE_INT64, &value);
  return value;
}

}  // namespace fiber::rl::hdf5
