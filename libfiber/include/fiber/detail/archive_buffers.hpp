// The stream buffers through which fiber/serialization.hpp's Boost archives write into fiber::Bytes
// and read from a span of bytes in place, and the archives' flags. Not part of the public API.
#pragma once

#include <span>
#include <streambuf>

#include "fiber/bytes.hpp"

#include <boost/archive/basic_archive.hpp>

namespace fiber::detail {

// Appends what an archive writes to a byte vector.
class AppendingStreambuf : public std::streambuf {
 public:
  explicit AppendingStreambuf(Bytes& out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    out_.insert(out_.end(), data, data + size);
    return size;
  }
  int_type overflow(int_type ch) override {
    if (!traits_type::eq_int_type(ch, traits_type::eof())) out_.push_back(static_cast<char>(ch));
    return traits_type::not_eof(ch);
  }

 private:
  Bytes& out_;
};

// Reads an archive from a span of bytes without copying it.
class SpanStreambuf : public std::streambuf {
 public:
  explicit SpanStreambuf(std::span<const char> in) {
    char* begin = const_cast<char*>(in.data());  // the get area is only read
    setg(begin, begin, begin + in.size());
  }
};

// No archive header (both ends are the same binary), and the stream's locale left as it is.
constexpr unsigned kArchiveFlags = boost::archive::no_header | boost::archive::no_codecvt;

}  // namespace fiber::detail
