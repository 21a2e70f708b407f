// What a spawn of workers needs of this host's resources, checked before MPI_Comm_spawn: on Open
// MPI 4.1 a spawn whose processes cannot start for want of file descriptors or /dev/shm never
// returns (docs/platform.md, "A spawn that cannot start never returns"), so fiber refuses it
// first, saying what is short.
#pragma once

#include <string>

namespace fiber::detail {

// How a spawn's errors name its workers: "worker 3", "workers 0 to 15".
std::string workers_named(int first_id, int count);

// Throws fiber::SpawnError, naming what is short and by how much, if `count` more workers
// (`first_id` the first) would run out of file descriptors (in the master, in each worker, or in
// mpirun when the job runs on this machine alone) or, on this machine alone, of /dev/shm, while
// `live` processes of the job run (the master included).
void check_spawn_resources(int first_id, int count, int live);

}  // namespace fiber::detail
