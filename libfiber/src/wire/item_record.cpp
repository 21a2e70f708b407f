#include "wire/item_record.hpp"

namespace fiber::detail {

void ItemRecordWriter::fail(std::string_view type, std::string_view message) {
  out_.resize(record_ + sizeof(ItemStatus));
  ok_ = false;
  ByteWriter(out_).string(type).string(message);
}

ItemError ItemError::decode(std::span<const char> bytes) {
  ByteReader reader(bytes, "an item's error");
  ItemError error;
  error.type = reader.string();
  error.message = reader.string();
  reader.expect_end();
  return error;
}

}  // namespace fiber::detail
