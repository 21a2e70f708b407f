// Run bodies for the tests, encoded as the master encodes them (protocol.hpp, RunHeader), and
// the item records of a result decoded back.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fiber/serialization.hpp"
#include "wire/protocol.hpp"

namespace fiber::unit {

struct RunOptions {
  std::uint64_t chunk_id = 1;
  std::uint32_t flags = detail::kRunIsolated;
  std::uint32_t timeout_ms = 0;
};

// A run body of `task` with these items (each an encoded argument tuple).
inline Bytes run_body(std::string_view task, const std::vector<Bytes>& items,
                      RunOptions options = {}) {
  detail::RunHeader header{options.chunk_id, static_cast<std::uint32_t>(task.size()),
                           static_cast<std::uint32_t>(items.size()), options.flags,
                           options.timeout_ms};
  std::vector<std::uint64_t> offsets{0};
  for (const auto& item : items) offsets.push_back(offsets.back() + item.size());
  // Sized first and filled in place (growing it part by part trips gcc 12's -Warray-bounds).
  Bytes body(sizeof header + task.size() + offsets.size() * sizeof(std::uint64_t) + offsets.back());
  char* at = body.data();
  auto put = [&at](const void* data, std::size_t size) {
    std::memcpy(at, data, size);
    at += size;
  };
  put(&header, sizeof header);
  put(task.data(), task.size());
  put(offsets.data(), offsets.size() * sizeof(std::uint64_t));
  for (const auto& item : items) put(item.data(), item.size());
  return body;
}

// One item's outcome, as read back from its record ([ItemStatus][bytes]).
struct ItemOutcome {
  bool ok;
  Bytes bytes;  // the result, or the error (type and message)
};

// Reads `count` records, back to back, into outcomes.
inline std::vector<ItemOutcome> read_records(std::span<const char> records, std::size_t count) {
  std::vector<ItemOutcome> outcomes;
  detail::BodyReader reader(records);
  for (std::size_t i = 0; i < count; ++i) {
    auto status = reader.raw<detail::ItemStatus>();
    auto bytes = reader.take(status.size);
    outcomes.push_back({status.ok != 0, Bytes(bytes.begin(), bytes.end())});
  }
  return outcomes;
}

// A failed item's error: its type and message.
struct ItemError {
  std::string type;
  std::string message;
};

inline ItemError read_error(const ItemOutcome& outcome) {
  detail::BodyReader reader(outcome.bytes);
  ItemError error;
  error.type = reader.string();
  error.message = reader.string();
  return error;
}

}  // namespace fiber::unit
