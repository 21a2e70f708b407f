#include "reduction/reduction_tasks.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "fiber/task.hpp"
#include "reduction/partial_store.hpp"
#include "worker.hpp"

namespace fiber::detail {

class PartialMissing : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void combine_into(const std::string& operation, Bytes& left, std::span<const char> right) {
  Combiner combiner = find_combiner(operation);
  if (!combiner) {
    throw std::invalid_argument(fmt::format(
        "fiber: '{}' is not a registered task of the form R op(R, R) in this process", operation));
  }
  Bytes combined;
  combiner(left, right, combined);
  left = std::move(combined);
}

ChunkPartial reduce_chunk(ReduceChunk chunk) {
  const Invoker* invoker = find_invoker(chunk.task);
  if (!invoker) {
    throw std::invalid_argument(fmt::format(
        "no task named '{}' is registered in this worker; register it with FIBER_TASK({})",
        chunk.task, chunk.task));
  }
  Bytes folded, value;
  for (std::size_t i = 0; i + 1 < chunk.offsets.size(); ++i) {
    std::span<const char> item(chunk.items.data() + chunk.offsets[i],
                               chunk.offsets[i + 1] - chunk.offsets[i]);
    value.clear();
    (*invoker)(item, value);  // what the task throws fails the reduction, as in a map
    if (i == 0) {
      folded = value;
    } else {
      combine_into(chunk.operation, folded, value);
    }
  }
  if (chunk.store_on != this_process().host) return {false, std::move(folded)};
  partial_store::write(chunk.reduction, chunk.chunk, folded);
  return {true, {}};
}

Bytes reduce_node(ReduceNode node) {
  Bytes folded;
  for (std::uint32_t chunk = 0; chunk < node.parts.size(); ++chunk) {
    ChunkPartial& part = node.parts[chunk];
    if (part.stored) {
      auto value = partial_store::read(node.reduction, chunk);
      if (!value) {
        throw PartialMissing(
            fmt::format("the partial result of chunk {} of reduction {} is not on {}", chunk,
                        node.reduction, this_process().host));
      }
      part.value = std::move(*value);
    }
    if (chunk == 0) {
      folded = std::move(part.value);
    } else {
      combine_into(node.operation, folded, part.value);
    }
  }
  // Only once the node's value is made: a task process lost before leaves the store as it was.
  for (std::uint32_t chunk = 0; chunk < node.parts.size(); ++chunk) {
    if (node.parts[chunk].stored) partial_store::remove(node.reduction, chunk);
  }
  return folded;
}

}  // namespace fiber::detail

FIBER_TASK(fiber::detail::reduce_chunk);
FIBER_TASK(fiber::detail::reduce_node);
