#include "wire/entry_list.hpp"

#include <memory>
#include <utility>

#include "wire/channel.hpp"

namespace fiber::detail {

void append_entry(Bytes& list, std::span<const char> entry) {
  ByteWriter(list).value(std::uint64_t{entry.size()}).raw(entry);
}

Bytes entry_size_prefix(std::uint64_t size) {
  Bytes prefix;
  ByteWriter(prefix).value(size);
  return prefix;
}

void Batch::add(std::initializer_list<std::span<const char>> parts) {
  std::uint64_t size = 0;
  for (auto part : parts) size += part.size();
  ByteWriter writer(bytes_);
  writer.value(size);
  for (auto part : parts) writer.raw(part);
}

void Batch::add(const RunEntryParts& entry) {
  ByteWriter(bytes_).value(entry.size());
  entry.append_to(bytes_);
}

void Batch::send(Channel& channel) {
  if (bytes_.empty()) return;
  // A batch past the eager size is sent in place: it must outlive the send.
  auto owned = std::make_shared<const Bytes>(std::move(bytes_));
  bytes_ = Bytes();
  channel.send(kind_, {*owned}, owned);
}

}  // namespace fiber::detail
