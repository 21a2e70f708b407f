#include "storage/hdf5/error.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace fiber::rl::hdf5 {

namespace {

constexpr std::size_t kMessageBytes = 256;  // HDF5's names of its error codes are short

struct Innermost {
  std::optional<ErrorCode> code;
  std::string description;
};

herr_t keep_innermost(unsigned /*n*/, const H5E_error2_t* entry, void* data) {
  auto& innermost = *static_cast<Innermost*>(data);
  if (innermost.code) return 0;  // walking upward: the first entry is the innermost
  innermost.code = ErrorCode{entry->maj_num, entry->min_num};
  innermost.description = entry->desc != nullptr ? entry->desc : "";
  if (innermost.description.empty()) {
    std::array<char, kMessageBytes> text{};
    if (H5Eget_msg(entry->min_num, nullptr, text.data(), text.size()) > 0) {
      innermost.description = text.data();
    }
  }
  return 0;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// A failed system call reads "file write failed: time = ..., errno = 28, error message = 'No
// space left on device', buf = ...": its error message is what matters.
std::string readable(const std::string& description) {
  constexpr std::string_view kSystemMessage = "error message = '";
  const std::size_t start = description.find(kSystemMessage);
  if (start != std::string::npos) {
    const std::size_t from = start + kSystemMessage.size();
    const std::size_t end = description.find('\'', from);
    if (end != std::string::npos) {
      return one_line(description.substr(0, description.find(':')) + ": " +
                      description.substr(from, end - from));
    }
  }
  return one_line(description);
}

}  // namespace

bool Error::is_checksum_mismatch() const noexcept {
  // How the Fletcher32 filter reports a chunk whose checksum does not match (HDF5 1.10 has no
  // H5E_CHECKSUM minor code).
  return code_.major_id == H5E_STORAGE && code_.minor_id == H5E_READERROR;
}

bool Error::is_lock_conflict() const noexcept { return code_.minor_id == H5E_CANTLOCKFILE; }

bool Error::is_truncated_file() const noexcept { return code_.minor_id == H5E_TRUNCATED; }

void silence() {
  thread_local bool silenced = false;
  if (silenced) return;
  static const bool no_shutdown_at_exit = H5dont_atexit() >= 0;  // before HDF5 initializes
  static_cast<void>(no_shutdown_at_exit);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  silenced = true;
}

Error last_error(std::string_view fallback) {
  Innermost innermost;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &innermost);
  if (!innermost.code || innermost.description.empty()) {
    return Error(innermost.code.value_or(ErrorCode{}), std::string(fallback));
  }
  return Error(*innermost.code, readable(innermost.description));
}

hid_t checked_id(hid_t id) {
  if (id < 0) throw last_error();
  return id;
}

void check(herr_t status) {
  if (status < 0) throw last_error();
}

bool truth(htri_t answer) {
  if (answer < 0) throw last_error();
  return answer > 0;
}

}  // namespace fiber::rl::hdf5
