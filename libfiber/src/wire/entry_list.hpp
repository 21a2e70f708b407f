// The body of run and result messages: a list of entries, each a u64 size and then the entry (a
// run entry, run_entry.hpp; a result entry, result_entry.hpp), so that several small chunks (or
// their results) travel in one MPI message; and the Batch that collects them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "fiber/serialization.hpp"
#include "wire/codec.hpp"
#include "wire/message_kind.hpp"
#include "wire/run_entry.hpp"

namespace fiber::detail {

class Channel;

// A Batch takes entries up to this size (larger ones travel alone) and is sent once it holds
// kBatchBytes.
inline constexpr std::size_t kBatchedEntryBytes = std::size_t{16} * 1024;
inline constexpr std::size_t kBatchBytes = std::size_t{48} * 1024;

// Appends one entry to a list body.
void append_entry(Bytes& list, std::span<const char> entry);
// What an entry of `size` bytes starts with in a list: for a sender that sends the entry after it,
// in place.
Bytes entry_size_prefix(std::uint64_t size);

// Calls `each` with every entry of a list body.
template <class Each>
void for_each_entry(std::span<const char> list, Each each) {
  ByteReader reader(list, "a protocol list");
  while (!reader.at_end()) each(reader.raw(reader.value<std::uint64_t>()));
}

// Collects small entries of a list body to send them as one message.
class Batch {
 public:
  explicit Batch(MessageKind kind) : kind_(kind) {}
  bool empty() const { return bytes_.empty(); }
  // Appends one entry made of `parts` back to back.
  void add(std::initializer_list<std::span<const char>> parts);
  void add(const RunEntryParts& entry);
  bool full() const { return bytes_.size() >= kBatchBytes; }
  // The list body as it would be sent.
  std::span<const char> bytes() const { return bytes_; }
  void send(Channel& channel);

 private:
  MessageKind kind_;
  Bytes bytes_;
};

}  // namespace fiber::detail
