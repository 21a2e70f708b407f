// Where a node keeps the partial results of a reduction (Pool::map_reduce) until one of its
// workers combines them: one file per chunk in the node's shared memory (/dev/shm), named by the
// run, the host (simulated nodes share one /dev/shm), the reduction and the chunk. A file
// outlives the process that wrote it, so a worker lost after its chunk costs nothing, and any
// worker on the node can read it, whichever spawn it came from (docs/design.md, "Reductions
// (Pool::map_reduce)"). A writer first holds the run's anchor on the node (a file of the same
// prefix, flock'ed shared for the writer's life), whose watcher removes the run's partial results
// on the node once no writer is left, however the run ended; remove_stale() sweeps those whose
// watcher was killed too.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "fiber/bytes.hpp"

namespace fiber::detail::partial_store {

// Writes a chunk's partial result whole or not at all (a temporary file, then renamed): a file
// of this name is always complete. Throws std::runtime_error naming the file if it cannot.
void write(const std::string& reduction, std::uint32_t chunk, std::span<const char> value);
// The partial result of a chunk stored on this node, or nothing if there is none (its writer
// ran on another node, or the file was lost).
std::optional<Bytes> read(const std::string& reduction, std::uint32_t chunk);
void remove(const std::string& reduction, std::uint32_t chunk);
// Removes every partial result of this run on this node (at the end of the run).
void remove_all_of_run();
// Removes the partial results on this node of every run whose anchor nobody holds (when a master
// starts, and before a run's first partial result on a node).
void remove_stale();

}  // namespace fiber::detail::partial_store
