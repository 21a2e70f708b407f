// An item record: one item's outcome, as a task process sends it up its ring (task_frames.hpp)
// and as a result entry carries it (result_entry.hpp). ItemStatus, then the item's bytes: its
// result, or for a failed item its error (ItemError: u32 size + type name, u32 size + message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fiber/serialization.hpp"
#include "wire/codec.hpp"

namespace fiber::detail {

struct ItemStatus {
  std::uint64_t size;
  std::uint64_t ok;
};

// Writes one record at the end of `out`. Its status counts the bytes that follow, so room is left
// for it, the caller appends the item's result to `out` (or fail() writes an error instead), and
// finish() fills the status in.
class ItemRecordWriter {
 public:
  explicit ItemRecordWriter(Bytes& out)
      : out_(out), record_(ByteWriter(out).room_for<ItemStatus>()) {}
  // The item failed: what it appended goes, its error is written.
  void fail(std::string_view type, std::string_view message);
  void finish() {
    std::size_t bytes = out_.size() - record_ - sizeof(ItemStatus);
    ByteWriter(out_).value_at(record_, ItemStatus{bytes, ok_ ? 1u : 0u});
  }

 private:
  Bytes& out_;
  std::size_t record_;  // where the status lies in out_
  bool ok_ = true;
};

// A record read in place: `bytes` is the result, or the error (ItemError::decode).
struct ItemRecord {
  bool ok;
  std::span<const char> bytes;
};
inline ItemRecord read_item_record(ByteReader& reader) {
  auto status = reader.value<ItemStatus>();
  return {status.ok != 0, reader.raw(status.size)};
}

// A failed item's error.
struct ItemError {
  std::string type;
  std::string message;
  static ItemError decode(std::span<const char> bytes);
};

}  // namespace fiber::detail
