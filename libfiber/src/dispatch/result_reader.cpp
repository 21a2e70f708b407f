#include "dispatch/result_reader.hpp"

#include "fiber/errors.hpp"

namespace fiber::detail {

ResultReader::ResultReader(std::span<const char> entry, std::uint64_t offset)
    : reader_(entry), offset_(offset), header_(reader_.raw<ResultHeader>()) {}

std::uint64_t ResultReader::items(const std::string& task, const WorkerInfo& worker,
                                  std::vector<JobState::ItemResult>& results) {
  results.assign(header_.count, JobState::ItemResult{});
  std::uint64_t failed = 0;
  for (auto& result : results) {
    auto status = reader_.raw<ItemStatus>();
    result.ok = status.ok != 0;
    result.offset = offset_ + reader_.position();
    result.size = status.size;
    auto bytes = reader_.take(status.size);
    if (!result.ok) {
      ++failed;
      BodyReader error(bytes);
      std::string type = error.string();
      std::string what = error.string();
      result.error = std::make_exception_ptr(TaskError(task, type, what, worker));
    }
  }
  return failed;
}

std::string ResultReader::reason() { return reader_.string(); }

}  // namespace fiber::detail
