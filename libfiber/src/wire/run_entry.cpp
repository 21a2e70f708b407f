#include "wire/run_entry.hpp"

#include "wire/codec.hpp"

namespace fiber::detail {
namespace {

constexpr std::uint64_t kStandInOffsets[] = {0, sizeof(std::uint64_t)};

// Writes an entry's header, name and offsets.
ByteWriter& write_head(ByteWriter& writer, const RunEntryParts& entry) {
  RunHeader header = entry.header;
  header.name_size = static_cast<std::uint32_t>(entry.task.size());
  header.count = static_cast<std::uint32_t>(entry.offsets.size() - 1);
  return writer.value(header).raw(entry.task).values(entry.offsets);
}

}  // namespace

std::uint64_t RunEntryParts::size() const {
  return sizeof header + task.size() + offsets.size_bytes() + items.size();
}

Bytes RunEntryParts::head() const {
  Bytes head;
  ByteWriter writer(head);
  write_head(writer, *this);
  return head;
}

void RunEntryParts::append_to(Bytes& out) const {
  ByteWriter writer(out);
  write_head(writer, *this).raw(items);
}

Bytes stand_in_entry(const RunHeader& header, std::uint64_t relay_chunk) {
  Bytes item;
  ByteWriter(item).value(relay_chunk);
  Bytes entry;
  RunEntryParts{header, {}, kStandInOffsets, item}.append_to(entry);
  return entry;
}

Bytes with_header(std::span<const char> entry, RunHeader header) {
  RunHeader own = RunBody(entry).header();
  header.name_size = own.name_size;
  header.count = own.count;
  Bytes copy(entry.begin(), entry.end());
  ByteWriter(copy).value_at(0, header);
  return copy;
}

RunBody::RunBody(std::span<const char> entry, std::string_view what) {
  ByteReader reader(entry, what);
  header_ = reader.value<RunHeader>();
  auto name = reader.raw(header_.name_size);
  task_ = std::string_view(name.data(), name.size());
  offsets_ = reader.raw((std::size_t{header_.count} + 1) * sizeof(std::uint64_t));
  ByteReader items(reader.rest(), what);
  items_ = items.raw(offset(header_.count));
  items.expect_end();
}

std::uint64_t RunBody::offset(std::uint32_t index) const {
  return *peek_value<std::uint64_t>(offsets_.subspan(index * sizeof(std::uint64_t)));
}

std::span<const char> RunBody::item(std::uint32_t index) const {
  std::uint64_t begin = offset(index), end = offset(index + 1);
  if (begin > end || end > items_.size()) {
    throw ProtocolError("fiber: a run entry's item offsets do not add up");
  }
  return items_.subspan(begin, end - begin);
}

std::uint64_t RunBody::relay_chunk() const {
  ByteReader item(this->item(0), "a stand-in's item");
  auto chunk = item.value<std::uint64_t>();
  item.expect_end();
  return chunk;
}

}  // namespace fiber::detail
