// How a reduction's items are cut, fixed by the pool's layout when it is called, so that its
// result has the same bits whichever worker runs what: the items go to the hosts in blocks
// (hosts sorted by name, each block in proportion to the host's workers), each block is cut into
// chunks; a chunk's items are folded in item order on a worker, a block's chunks in chunk order on
// its node, and the blocks in host order on the master. The same hosts with the same numbers of
// workers give the same plan (a resumed run, a replaced worker).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fiber::detail {

struct HostWorkers {
  std::string host;
  int workers = 0;
};

struct ReductionBlock {
  std::string host;
  std::size_t first = 0;                // its first item
  std::vector<std::size_t> chunk_ends;  // chunk k ends before first + chunk_ends[k]
};

// Without a chunk size (0), each worker of a host gets this many chunks of its block: enough to
// even out uneven items a little, few enough that the node stores few partial results.
inline constexpr std::size_t kReductionChunksPerWorker = 2;

// The plan for `items` items over `hosts` (in any order; a host may be listed more than once).
// Blocks without items are left out; with no host, one block for any host.
std::vector<ReductionBlock> plan_reduction(std::size_t items, std::vector<HostWorkers> hosts,
                                           std::size_t chunksize);

}  // namespace fiber::detail
