#include "id_list.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace fiber::detail {
namespace {

int number_in(std::string_view list, std::string_view text) {
  int value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw std::invalid_argument(
        fmt::format("fiber: '{}' is not a list of numbers and ranges like 0-3,8", list));
  }
  return value;
}

}  // namespace

std::vector<int> parse_id_list(std::string_view text) {
  std::vector<int> ids;
  if (text.empty()) return ids;
  std::string_view rest = text;
  for (;;) {
    auto comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    auto dash = part.find('-');
    int first = number_in(text, part.substr(0, dash));
    int last = dash == std::string_view::npos ? first : number_in(text, part.substr(dash + 1));
    if (last < first) number_in(text, "-");  // a range backwards: the same error
    for (int id = first; id <= last; ++id) ids.push_back(id);
    if (comma == std::string_view::npos) return ids;
    rest = rest.substr(comma + 1);
  }
}

std::string format_id_list(const std::vector<int>& ids) {
  return fmt::format("{}", fmt::join(ids, ","));
}

}  // namespace fiber::detail
