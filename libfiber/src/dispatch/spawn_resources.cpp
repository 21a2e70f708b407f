#include "dispatch/spawn_resources.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "fiber/errors.hpp"
#include "launch_defaults.hpp"

namespace fiber::detail {
namespace {

// Open descriptors per process, measured under fiberrun on this stack (UCX, recovery on) with
// pools of 1, 2, 4, 8 and 16 workers started by one spawn each (docs/platform.md, "A spawn that
// cannot start never returns"):
// - the master held 35 before its first pool, then 40, 44, 52, 68 and 100: 4 per worker;
constexpr int kMasterDescriptorsPerWorker = 4;
// - the first pool's own (its doorbell socket) and a few for whatever the program opens later;
constexpr int kMasterDescriptorsHeadroom = 4;
// - a worker held 41, 43, 47, 55 and 71: 39 and 2 per process of its spawn;
constexpr int kWorkerDescriptorsAtStart = 39;
constexpr int kWorkerDescriptorsPerSibling = 2;
// - mpirun, which starts the workers of its own machine, held 27 with the master alone, then 31,
//   34, 40, 52 and 76: 25 and 3 per process it started (the master included). Past its limit it
//   starts none, and the spawn waits for ever.
constexpr int kLauncherDescriptorsAtStart = 25;
constexpr int kLauncherDescriptorsPerProcess = 3;

// /dev/shm a worker takes while MPI starts, measured with a /dev/shm of the job's own: 4,208 to
// 4,212 KiB per worker for pools of 1, 4 and 8 (Open MPI's shared-memory segment of 4,194,312
// bytes, and UCX's); UCX refuses to start with less than 4,292,720 bytes free (then the
// process fails in MPI_Init and the spawn waits for ever).
constexpr std::uint64_t kShmBytesPerWorker = std::uint64_t{4212} * 1024;
constexpr const char* kShmFolder = "/dev/shm";
constexpr double kMiB = 1024.0 * 1024.0;

// How many descriptors this process holds; `limit` if it cannot open one more to count them.
long open_descriptors(long limit) {
  std::error_code error;
  long count = 0;
  std::filesystem::directory_iterator at("/proc/self/fd", error);
  if (error) return error == std::errc::too_many_files_open ? limit : 0;
  for (std::filesystem::directory_iterator end; !error && at != end; at.increment(error)) ++count;
  return count > 0 ? count - 1 : 0;  // (less the iterator's own)
}

std::optional<long> descriptor_limit() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  return static_cast<long>(limit.rlim_cur);
}

void check_descriptors(int first_id, int count, int live) {
  auto limit = descriptor_limit();
  if (!limit) return;
  auto refuse = [&](const char* who, long needed) {
    if (needed <= *limit) return;
    throw SpawnError(fmt::format(
        "fiber: cannot start {}: {} would need about {} file descriptors, and the limit is {} "
        "(ulimit -n); raise it, or ask for fewer workers",
        workers_named(first_id, count), who, needed, *limit));
  };
  refuse("the master", open_descriptors(*limit) + kMasterDescriptorsPerWorker * count +
                           kMasterDescriptorsHeadroom);
  refuse("each of them", kWorkerDescriptorsAtStart + kWorkerDescriptorsPerSibling * count);
  // On a cluster the workers spread over the nodes, each node's daemon starting its own share.
  if (runs_locally()) {
    refuse("mpirun, which starts them",
           kLauncherDescriptorsAtStart + kLauncherDescriptorsPerProcess * (live + count));
  }
}

// On a cluster, which of the workers land on this node is mpirun's choice.
void check_shm(int first_id, int count) {
  if (!runs_locally()) return;
  struct statvfs space {};
  if (statvfs(kShmFolder, &space) != 0) return;
  std::uint64_t free = std::uint64_t{space.f_bavail} * space.f_frsize;
  std::uint64_t needed = kShmBytesPerWorker * static_cast<std::uint64_t>(count);
  if (free >= needed) return;
  throw SpawnError(fmt::format(
      "fiber: cannot start {}: MPI's start-up takes about {:.1f} MiB of {} for each, {:.1f} MiB "
      "in all, and {:.1f} MiB are free; free some (a NodeArray takes its size there), enlarge "
      "{} (for a container: --shm-size), or ask for fewer workers",
      workers_named(first_id, count), static_cast<double>(kShmBytesPerWorker) / kMiB, kShmFolder,
      static_cast<double>(needed) / kMiB, static_cast<double>(free) / kMiB, kShmFolder));
}

}  // namespace

std::string workers_named(int first_id, int count) {
  return count == 1 ? fmt::format("worker {}", first_id)
                    : fmt::format("workers {} to {}", first_id, first_id + count - 1);
}

void check_spawn_resources(int first_id, int count, int live) {
  check_shm(first_id, count);
  check_descriptors(first_id, count, live);
}

}  // namespace fiber::detail
