#include "reduction/reduction_tasks.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "fiber/task.hpp"
#include "reduction/partial_store.hpp"
#include "this_process.hpp"
#include "worker/item_runner.hpp"

namespace fiber::detail {

class PartialMissing : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Fold::Fold(std::string operation)
    : operation_(std::move(operation)), combiner_(find_combiner(operation_)) {}

void Fold::add(Bytes value) {
  if (!started_) {
    folded_ = std::move(value);
    started_ = true;
    return;
  }
  if (!combiner_) {
    throw std::invalid_argument(fmt::format(
        "fiber: '{}' is not a registered task of the form R op(R, R) in this process", operation_));
  }
  Bytes combined;
  combiner_(folded_, value, combined);
  folded_ = std::move(combined);
}

ChunkPartial reduce_chunk(ReduceChunk chunk) {
  const Invoker* invoker = find_invoker(chunk.task);
  if (!invoker) {
    throw std::invalid_argument(unknown_task_message(chunk.task));
  }
  Fold fold(chunk.operation);
  for (std::size_t i = 0; i + 1 < chunk.offsets.size(); ++i) {
    std::span<const char> item(chunk.items.data() + chunk.offsets[i],
                               chunk.offsets[i + 1] - chunk.offsets[i]);
    Bytes value;
    (*invoker)(item, value);  // what the task throws fails the reduction, as in a map
    fold.add(std::move(value));
  }
  Bytes folded = fold.take();
  if (chunk.store_on != this_process().host) return {false, std::move(folded)};
  partial_store::write(chunk.reduction, chunk.chunk, folded);
  return {true, {}};
}

Bytes reduce_node(ReduceNode node) {
  Fold fold(node.operation);
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
    fold.add(std::move(part.value));
  }
  // Only once the node's value is made: a task process lost before leaves the store as it was.
  for (std::uint32_t chunk = 0; chunk < node.parts.size(); ++chunk) {
    if (node.parts[chunk].stored) partial_store::remove(node.reduction, chunk);
  }
  return fold.take();
}

}  // namespace fiber::detail

FIBER_TASK(fiber::detail::reduce_chunk);
FIBER_TASK(fiber::detail::reduce_node);
