// fiber/serialization.hpp's encodings that skip Boost's archive: the same bytes as the archive's.
#include <gtest/gtest.h>

#include <string>

#include "fiber/serialization.hpp"

namespace fiber {
namespace {

Bytes archived(const std::string& value) {
  Bytes out;
  detail::AppendingStreambuf buffer(out);
  boost::archive::binary_oarchive archive(buffer, detail::kArchiveFlags);
  archive << value;
  return out;
}

TEST(LoneString, SameBytesAsBoostsArchive) {
  for (std::string value : {std::string(), std::string("x"), std::string(1000, '\0') + "end"}) {
    Bytes fast;
    encode_into(fast, value);
    EXPECT_EQ(fast, archived(value)) << value.size();
    EXPECT_EQ(decode<std::string>(fast), value);
    EXPECT_EQ(decode<std::string>(archived(value)), value);
  }
}

TEST(LoneString, BytesOfAnotherLengthAreATypeMismatch) {
  Bytes fast;
  encode_into(fast, std::string("abc"));
  Bytes longer = fast;
  longer.push_back('!');
  Bytes shorter(fast.begin(), fast.end() - 1);
  Bytes an_int;
  encode_into(an_int, 42);
  for (const Bytes& wrong : {longer, shorter, an_int, Bytes()}) {
    EXPECT_THROW(decode<std::string>(wrong), TypeMismatch) << wrong.size();
  }
}

// A map's items are encoded one after another into one buffer: it must grow geometrically (an
// exact reserve per item copied the whole buffer each time, quadratic in the map's length).
TEST(LoneString, ManyAppendedItemsMoveTheBufferLogarithmicallyOften) {
  constexpr int kItems = 100000;
  constexpr int kMostMoves = 64;  // about log2 of the final size, with room for any allocator
  Bytes out;
  const char* data = out.data();
  int moves = 0;
  for (int i = 0; i < kItems; ++i) {
    encode_into(out, std::string("item"));
    if (out.data() != data) {
      ++moves;
      data = out.data();
    }
  }
  EXPECT_LE(moves, kMostMoves);
}

TEST(LoneString, AStringAmongOtherValuesStillGoesThroughTheArchive) {
  Bytes out;
  encode_into(out, std::string("a"), 7);
  auto [text, number] = decode_tuple<std::string, int>(out);
  EXPECT_EQ(text, "a");
  EXPECT_EQ(number, 7);
}

}  // namespace
}  // namespace fiber
