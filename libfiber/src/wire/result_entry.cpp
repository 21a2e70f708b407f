#include "wire/result_entry.hpp"

namespace fiber::detail {

ResultHeader result_header(std::uint64_t chunk_id, std::uint32_t count, ChunkStatus status,
                           std::chrono::steady_clock::duration elapsed, std::uint32_t failed_item) {
  auto nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  return {chunk_id, count, status, static_cast<std::uint64_t>(nanoseconds), failed_item, 0};
}

Bytes begin_result_entry() {
  Bytes entry;
  ByteWriter(entry).room_for<ResultHeader>();
  return entry;
}

void finish_result_entry(Bytes& entry, const ResultHeader& header, std::string_view reason) {
  ByteWriter writer(entry);
  if (has_reason(header.status)) writer.string(reason);
  writer.value_at(0, header);
}

Bytes itemless_result(std::uint64_t chunk_id, ChunkStatus status) {
  Bytes entry = begin_result_entry();
  finish_result_entry(entry, result_header(chunk_id, 0, status, {}));
  return entry;
}

ResultEntryReader::ResultEntryReader(std::span<const char> entry)
    : reader_(entry, "a result entry"), header_(reader_.value<ResultHeader>()) {
  if (header_.count == 0 && !has_reason(header_.status)) reader_.expect_end();
}

ItemRecord ResultEntryReader::next_item() {
  ItemRecord record = read_item_record(reader_);
  if (++items_read_ == header_.count && !has_reason(header_.status)) reader_.expect_end();
  return record;
}

std::string ResultEntryReader::reason() {
  std::string reason = reader_.string();
  reader_.expect_end();
  return reason;
}

}  // namespace fiber::detail
