// A result entry: how one chunk ended, as an entry of a result message. ResultHeader, `count`
// item records (item_record.hpp), then for crashed and timed_out a reason (u32 size + text). When
// a task process dies, the items from `count` on have no result: `failed_item` is the one it died
// running (count <= failed_item).
//
// The header counts the records and times the chunk, so a writer leaves room for it
// (begin_result_entry), appends the records (ItemRecordWriter), and then finish_result_entry
// writes the reason and fills the header in.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "fiber/serialization.hpp"
#include "wire/codec.hpp"
#include "wire/item_record.hpp"

namespace fiber::detail {

// How a chunk ended (ResultHeader::status).
enum class ChunkStatus : std::uint32_t {
  complete = 0,
  cancelled,  // dropped unrun (pool terminated)
  crashed,    // the task process died running item `failed_item`; the reason follows the items
  timed_out,  // item `failed_item` passed its deadline and was killed; the reason follows
  not_run,    // its task process died before reaching it: send it again, nothing counted
};

struct ResultHeader {
  std::uint64_t chunk_id;
  std::uint32_t count;
  ChunkStatus status;
  std::uint64_t elapsed_ns;  // time spent running the chunk's items
  std::uint32_t failed_item;
  std::uint32_t unused;
};

// Whether an entry of this status ends with a reason.
inline bool has_reason(ChunkStatus status) {
  return status == ChunkStatus::crashed || status == ChunkStatus::timed_out;
}

ResultHeader result_header(std::uint64_t chunk_id, std::uint32_t count, ChunkStatus status,
                           std::chrono::steady_clock::duration elapsed,
                           std::uint32_t failed_item = 0);

// An entry's start: room for its header.
Bytes begin_result_entry();
// Ends an entry begun by begin_result_entry, its records appended: `reason` is written if the
// status has one (has_reason), and the header.
void finish_result_entry(Bytes& entry, const ResultHeader& header, std::string_view reason = {});
// The whole entry of a chunk that ran no item and says no reason (cancelled, not run).
Bytes itemless_result(std::uint64_t chunk_id, ChunkStatus status);

// Reads an entry in place, front to back: the header, header().count records, the reason.
// Throws ProtocolError if it is cut short or goes on past its end.
class ResultEntryReader {
 public:
  explicit ResultEntryReader(std::span<const char> entry);
  const ResultHeader& header() const { return header_; }
  ItemRecord next_item();
  // Why the task process died (has_reason), once the items are read.
  std::string reason();

 private:
  ByteReader reader_;
  ResultHeader header_;
  std::uint32_t items_read_ = 0;
};

}  // namespace fiber::detail
