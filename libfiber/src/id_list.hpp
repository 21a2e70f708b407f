// Lists of CPU or device numbers as Linux and Slurm write them ("0-3,8", "0,1"), for the worker
// shapes: a worker says which CPUs and devices its node offers, the master says which it gets.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fiber::detail {

// The numbers of `text`, in its order: comma-separated numbers and ranges "a-b" (a <= b);
// empty text, none. std::invalid_argument, naming the text, on anything else.
std::vector<int> parse_id_list(std::string_view text);
// The numbers as a comma-separated list ("0,1,2"), which parse_id_list reads back.
std::string format_id_list(const std::vector<int>& ids);

}  // namespace fiber::detail
