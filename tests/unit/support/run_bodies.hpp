// Run entries for the tests, written as the master writes them (wire/run_entry.hpp), and the item
// records of a result read back (wire/item_record.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fiber/serialization.hpp"
#include "wire/codec.hpp"
#include "wire/item_record.hpp"
#include "wire/run_entry.hpp"

namespace fiber::unit {

struct RunOptions {
  std::uint64_t chunk_id = 1;
  std::uint32_t flags = detail::kRunIsolated;
  std::uint32_t timeout_ms = 0;
};

// A run entry of `task` with these items (each an encoded argument tuple).
inline Bytes run_body(std::string_view task, const std::vector<Bytes>& items,
                      RunOptions options = {}) {
  detail::RunHeader header{options.chunk_id, 0, 0, options.flags, options.timeout_ms};
  std::vector<std::uint64_t> offsets{0};
  Bytes joined;
  for (const auto& item : items) {
    detail::ByteWriter(joined).raw(item);
    offsets.push_back(joined.size());
  }
  Bytes body;
  detail::RunEntryParts{header, task, offsets, joined}.append_to(body);
  return body;
}

// One item's outcome, as read back from its record.
struct ItemOutcome {
  bool ok;
  Bytes bytes;  // the result, or the error (type and message)
};

// Reads `count` records, back to back, into outcomes.
inline std::vector<ItemOutcome> read_records(std::span<const char> records, std::size_t count) {
  std::vector<ItemOutcome> outcomes;
  detail::ByteReader reader(records, "the test's item records");
  for (std::size_t i = 0; i < count; ++i) {
    auto record = detail::read_item_record(reader);
    outcomes.push_back({record.ok, Bytes(record.bytes.begin(), record.bytes.end())});
  }
  return outcomes;
}

// A failed item's error: its type and message.
inline detail::ItemError read_error(const ItemOutcome& outcome) {
  return detail::ItemError::decode(outcome.bytes);
}

}  // namespace fiber::unit
