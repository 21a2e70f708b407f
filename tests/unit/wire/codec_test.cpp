// The byte codec (wire/codec.hpp): what a ByteWriter appends a ByteReader takes back in order; a
// reader refuses bytes cut short, and bytes past an end it expects, naming what it reads.
#include "wire/codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fiber/serialization.hpp"

namespace fiber::detail {
namespace {

struct Pair {
  std::int32_t first;
  std::uint32_t second;
};

// The message of the ProtocolError that `read` throws ("no error" if none).
template <class Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const ProtocolError& error) {
    return error.what();
  }
  return "no error";
}

TEST(ByteCodec, ValuesStringsSizedAndRawBytesComeBackInOrder) {
  const std::string long_text(100000, 'q');
  const std::vector<std::uint64_t> numbers{1, 2, std::uint64_t{1} << 40};
  const std::string raw = "raw!";
  Bytes bytes;
  ByteWriter(bytes)
      .value(std::int32_t{-7})
      .string("run-identity")
      .string("")
      .string(long_text)
      .value(Pair{-1, 2})
      .values(std::span<const std::uint64_t>(numbers))
      .sized(Bytes{'a', 'b'})
      .raw(raw);
  ByteReader reader(bytes, "a test message");
  EXPECT_EQ(reader.value<std::int32_t>(), -7);
  EXPECT_EQ(reader.string(), "run-identity");
  EXPECT_EQ(reader.string(), "");
  EXPECT_EQ(reader.string(), long_text);
  Pair pair = reader.value<Pair>();
  EXPECT_EQ(pair.first, -1);
  EXPECT_EQ(pair.second, 2u);
  EXPECT_EQ(reader.values<std::uint64_t>(numbers.size()), numbers);
  auto sized = reader.sized();
  EXPECT_EQ(Bytes(sized.begin(), sized.end()), (Bytes{'a', 'b'}));
  EXPECT_FALSE(reader.at_end());
  auto rest = reader.rest();
  EXPECT_EQ(std::string(rest.begin(), rest.end()), raw);
  EXPECT_TRUE(reader.at_end());
  EXPECT_NO_THROW(reader.expect_end());
  EXPECT_TRUE(reader.raw(0).empty());
}

TEST(ByteCodec, TheBytesAreTheValuesInMachineOrderAndAStringsSizeIsAU32) {
  Bytes bytes;
  ByteWriter(bytes).value(std::uint16_t{0x0102}).string("xy");
  std::uint16_t number = 0x0102;
  std::uint32_t size = 2;
  Bytes expected(reinterpret_cast<const char*>(&number),
                 reinterpret_cast<const char*>(&number) + sizeof number);
  expected.insert(expected.end(), reinterpret_cast<const char*>(&size),
                  reinterpret_cast<const char*>(&size) + sizeof size);
  expected.insert(expected.end(), {'x', 'y'});
  EXPECT_EQ(bytes, expected);
}

TEST(ByteCodec, RoomLeftForAValueIsFilledInAfterWhatFollowsIt) {
  Bytes bytes{'>'};
  ByteWriter writer(bytes);
  std::size_t at = writer.room_for<std::uint64_t>();
  writer.string("after");
  writer.value_at(at, std::uint64_t{99});
  EXPECT_EQ(at, 1u);
  ByteReader reader(std::span<const char>(bytes).subspan(1), "a test message");
  EXPECT_EQ(reader.value<std::uint64_t>(), 99u);
  EXPECT_EQ(reader.string(), "after");
}

TEST(ByteCodec, EveryReadPastTheEndIsRefusedNamingWhatWasRead) {
  Bytes bytes;
  ByteWriter(bytes).value(std::uint64_t{5}).string("text");
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    ByteReader reader(std::span<const char>(bytes).first(size), "a lane_kill message");
    EXPECT_EQ(error_of([&] {
                reader.value<std::uint64_t>();
                reader.string();
              }),
              "fiber: a lane_kill message was cut short")
        << "size " << size;
  }
}

TEST(ByteCodec, ARawReadOrACountOfValuesLongerThanTheBytesIsRefused) {
  Bytes bytes(3, 'x');
  ByteReader raw(bytes, "a test message");
  EXPECT_THROW(raw.raw(4), ProtocolError);
  ByteReader values(bytes, "a test message");
  EXPECT_THROW(values.values<std::uint64_t>(std::uint64_t{1} << 32), ProtocolError);
  ByteReader empty(std::span<const char>{}, "a test message");
  EXPECT_THROW(empty.value<std::uint8_t>(), ProtocolError);
}

TEST(ByteCodec, BytesPastAnExpectedEndAreRefusedAndCounted) {
  Bytes bytes;
  ByteWriter(bytes).value(std::uint32_t{1}).value(std::uint8_t{2}).value(std::uint16_t{3});
  ByteReader reader(bytes, "a shutdown message");
  reader.value<std::uint32_t>();
  EXPECT_EQ(error_of([&] { reader.expect_end(); }),
            "fiber: a shutdown message has 3 bytes past its end");
  reader.value<std::uint16_t>();
  EXPECT_EQ(error_of([&] { reader.expect_end(); }),
            "fiber: a shutdown message has 1 byte past its end");
}

TEST(ByteCodec, PeekGivesTheFrontValueOnlyOnceAllOfItIsThere) {
  Bytes bytes;
  ByteWriter(bytes).value(std::uint32_t{77});
  EXPECT_EQ(peek_value<std::uint32_t>(bytes), 77u);
  EXPECT_FALSE(peek_value<std::uint32_t>(std::span<const char>(bytes).first(3)).has_value());
  EXPECT_FALSE(peek_value<std::uint64_t>(bytes).has_value());
}

}  // namespace
}  // namespace fiber::detail
