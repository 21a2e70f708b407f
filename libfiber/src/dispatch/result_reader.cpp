#include "dispatch/result_reader.hpp"

#include "fiber/errors.hpp"

namespace fiber::detail {

ResultReader::ResultReader(std::span<const char> entry, std::uint64_t offset)
    : entry_(entry), offset_(offset), reader_(entry) {}

std::uint64_t ResultReader::items(const std::string& task, const WorkerInfo& worker,
                                  std::vector<JobState::ItemResult>& results) {
  results.assign(header().count, JobState::ItemResult{});
  std::uint64_t failed = 0;
  for (auto& result : results) {
    ItemRecord record = reader_.next_item();
    result.ok = record.ok;
    result.offset = offset_ + static_cast<std::uint64_t>(record.bytes.data() - entry_.data());
    result.size = record.bytes.size();
    if (!result.ok) {
      ++failed;
      auto error = ItemError::decode(record.bytes);
      result.error = std::make_exception_ptr(
          TaskError(task, std::move(error.type), std::move(error.message), worker));
    }
  }
  return failed;
}

std::string ResultReader::reason() { return reader_.reason(); }

}  // namespace fiber::detail
