// Open MPI's shared-memory segment of this process (btl/vader:
// /dev/shm/vader_segment.<host>.<uid>.<job>.<local rank>, 4 MiB), which Open MPI removes in
// MPI_Finalize, or the node daemon once the process ended without it. A worker that leaves because
// its daemon is gone removes its own, as nobody else will (docs/platform.md, "A clean end").
#pragma once

#include <string_view>

namespace fiber::detail {

// Whether `path`, a file this process maps, is its own segment: that of `host` and `local_rank`.
bool is_own_mpi_segment(std::string_view path, std::string_view host, std::string_view local_rank);

// Removes this process's segment, found among its mappings (/proc/self/maps), if there is one.
void unlink_own_mpi_segment();

}  // namespace fiber::detail
