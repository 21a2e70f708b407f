// The two tasks a reduction (Pool::map_reduce) runs on the workers, and what they take. Both run
// like any task (in the task process, retried after a crash), so a user's function and combining
// operation are contained as in a map.
//   reduce_chunk: the task on each item of a chunk, folded in item order with the operation;
//     the chunk's partial result is stored on the node when the worker is on the host the
//     reduction planned for it, and returned otherwise.
//   reduce_node: the partial results of a node's chunks folded in chunk order, read from the
//     node's store (or given, for chunks that ran elsewhere): the node's one value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "fiber/detail/task_invokers.hpp"
#include "fiber/serialization.hpp"

namespace fiber::detail {

struct ReduceChunk {
  std::string task;       // the user's function
  std::string operation;  // the combining task, R op(R, R)
  std::string reduction;  // the reduction's name in the node stores
  std::uint32_t chunk = 0;
  std::string store_on;  // the host whose store takes the partial result
  Bytes items;           // the chunk's items, encoded as the task's arguments, back to back
  std::vector<std::uint64_t> offsets;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& task& operation& reduction& chunk& store_on& items& offsets;
  }
};

// A chunk's partial result, or a word that it is in the store of the node it ran on.
// (Boost 1.74 cannot serialize std::optional.)
struct ChunkPartial {
  bool stored = false;
  Bytes value;  // when not stored

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& stored& value;
  }
};

struct ReduceNode {
  std::string operation;
  std::string reduction;
  // One per chunk of the node, in order: the partial result if the master holds it (the chunk ran
  // on another node), else stored (it is in this node's store).
  std::vector<ChunkPartial> parts;

  template <class Archive>
  void serialize(Archive& archive, unsigned /*version*/) {
    archive& operation& reduction& parts;
  }
};

ChunkPartial reduce_chunk(ReduceChunk chunk);
Bytes reduce_node(ReduceNode node);

// Folds encoded values left to right with a registered operation R op(R, R), as they come: how
// a worker folds its chunk's items, a node its chunks, and the master the nodes' values alike.
class Fold {
 public:
  explicit Fold(std::string operation);
  void add(Bytes value);
  // The fold of the values added (at least one).
  Bytes take() { return std::move(folded_); }

 private:
  std::string operation_;
  Combiner combiner_;  // nullptr if the operation is not registered here
  Bytes folded_;
  bool started_ = false;
};

// What reduce_node throws when a partial result is not in the node's store (its file was lost, or
// the task ran on another node): the master then has the node's chunks run again, returned.
inline constexpr const char* kPartialMissing = "fiber::detail::PartialMissing";

}  // namespace fiber::detail
