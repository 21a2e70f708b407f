// A PMPI interposition library that counts what the master of an MPI job sends, receives and
// spawns: LD_PRELOAD it into the master, with FIBER_MPI_COUNTS=PATH. The master (the process
// without a parent communicator; spawned processes count nothing) keeps its counters in PATH,
// a small file mapped into memory, so that another process can read them while the job runs
// (benchmarks/es_scaling/es_scaling.py reads them). Each fflush(stdout) of the master (fiber-es
// flushes each generation's log line) also appends a snapshot of them with the master's CPU time,
// so that per-generation figures come from the master's own clock. Layout: the Counters struct
// below, native 64-bit integers.
//
// Point-to-point bytes are counted when a send is posted and when a receive completes (its
// status's size), so cancelled receives count nothing. Collectives count their calls and the
// bytes of the caller's buffer (what crosses the network depends on the algorithm). fiber's
// heartbeats are counted apart as well (a header alone: libfiber/src/wire/channel.hpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "counts_file.hpp"
#include "wire/channel.hpp"

namespace {

using namespace fiber_mpi_counts;

CountsFile* file = nullptr;
Counters* counters = nullptr;  // null: not the master, or no FIBER_MPI_COUNTS

// Whether `address` is in the program rather than in a shared library.
bool called_by_program(void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || !info.dli_fname) return false;
  return std::string_view(info.dli_fname).find(".so") == std::string_view::npos;
}

void take_snapshot() {
  std::uint64_t index = counters->snapshots.fetch_add(1);
  if (index >= kMaxSnapshots) return;
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  Snapshot& snapshot = file->snapshots[index];
  snapshot.process_cpu_nanoseconds = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
                                     static_cast<std::uint64_t>(now.tv_nsec);
  const std::atomic<std::uint64_t>* tallies = &counters->sent_messages;
  for (int k = 0; k < kTallies; ++k) snapshot.tallies[k] = tallies[k].load();
}

// Polls that find nothing are waiting, not work: the CPU time (thread clock) of each MPI test that
// completed nothing, and of what the thread did from there up to its next MPI test (the spins
// and yields of a polling loop), unless it made another MPI call in between (a send, a receive
// posted: work). All threads summed.
thread_local std::uint64_t idle_since = 0;  // thread CPU time at the end of an idle test; 0: none

std::uint64_t thread_cpu_nanoseconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

void count_idle(std::uint64_t nanoseconds) {
  counters->idle_poll_nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
}

// An MPI call other than a test: the thread is working.
void working() { idle_since = 0; }

// Times one MPI test call; `completed` tells from its result whether it found anything.
template <class Call, class Completed>
int timed_test(Call call, Completed completed) {
  std::uint64_t start = thread_cpu_nanoseconds();
  if (idle_since != 0) count_idle(start - idle_since);
  int rc = call();
  std::uint64_t end = thread_cpu_nanoseconds();
  if (rc == MPI_SUCCESS && !completed()) {
    count_idle(end - start);
    idle_since = end;
  } else {
    counters->transport_nanoseconds.fetch_add(end - start, std::memory_order_relaxed);
    idle_since = 0;
  }
  return rc;
}

// Runs an MPI call that is work (not a poll), its CPU time counted as the transport's.
template <class Call>
int in_transport(Call call) {
  if (!counters) return call();
  std::uint64_t start = thread_cpu_nanoseconds();
  int rc = call();
  counters->transport_nanoseconds.fetch_add(thread_cpu_nanoseconds() - start,
                                            std::memory_order_relaxed);
  return rc;
}

// The posted receives, to count each one's bytes when a test or wait completes it.
std::mutex receives_mutex;
std::unordered_set<MPI_Request> receives;

std::uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

void count_send(int count, MPI_Datatype type) {
  if (!counters) return;
  working();
  counters->sent_messages.fetch_add(1, std::memory_order_relaxed);
  counters->sent_bytes.fetch_add(bytes_of(count, type), std::memory_order_relaxed);
}

void count_received(const MPI_Status& status) {
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (cancelled) return;
  int bytes = 0;
  PMPI_Get_count(&status, MPI_BYTE, &bytes);
  if (bytes == MPI_UNDEFINED) return;
  counters->received_messages.fetch_add(1, std::memory_order_relaxed);
  counters->received_bytes.fetch_add(static_cast<std::uint64_t>(bytes), std::memory_order_relaxed);
  if (status.MPI_TAG == fiber::detail::kHeaderTag &&
      static_cast<std::size_t>(bytes) == sizeof(fiber::detail::MessageHeader)) {
    counters->received_heartbeats.fetch_add(1, std::memory_order_relaxed);
  }
}

void count_collective(int count, MPI_Datatype type) {
  if (!counters) return;
  working();
  counters->collective_calls.fetch_add(1, std::memory_order_relaxed);
  counters->collective_bytes.fetch_add(bytes_of(count, type), std::memory_order_relaxed);
}

void remember_receive(int rc, MPI_Request request) {
  if (!counters || rc != MPI_SUCCESS) return;
  working();
  std::lock_guard lock(receives_mutex);
  receives.insert(request);
}

// Counts the receives among `before` (the handles as they were before the call) that the call
// completed: those whose status index is listed in `done`.
void count_completed(const MPI_Request* before, const int* done, int done_count,
                     const MPI_Status* statuses, bool status_per_request) {
  std::lock_guard lock(receives_mutex);
  for (int k = 0; k < done_count; ++k) {
    int index = done ? done[k] : k;
    auto found = receives.find(before[index]);
    if (found == receives.end()) continue;
    receives.erase(found);
    count_received(statuses[status_per_request ? index : k]);
  }
}

// The handles of a call's requests as they were before it (completion resets them), and room for
// the statuses of a call whose caller ignores them: per thread, reused.
std::vector<MPI_Request>& saved_handles(const MPI_Request* requests, int count) {
  thread_local std::vector<MPI_Request> saved;
  saved.assign(requests, requests + count);
  return saved;
}

std::vector<MPI_Status>& status_space(int count) {
  thread_local std::vector<MPI_Status> statuses;
  statuses.resize(static_cast<std::size_t>(count));
  return statuses;
}

// The master is the process that no one spawned.
void start_counting() {
  const char* path = std::getenv("FIBER_MPI_COUNTS");
  MPI_Comm parent = MPI_COMM_NULL;
  PMPI_Comm_get_parent(&parent);
  if (!path || parent != MPI_COMM_NULL) return;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate(fd, sizeof(CountsFile)) != 0) {
    fprintf(stderr, "mpi_counts: cannot create %s\n", path);
    std::exit(EXIT_FAILURE);
  }
  void* memory = mmap(nullptr, sizeof(CountsFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    fprintf(stderr, "mpi_counts: cannot map %s\n", path);
    std::exit(EXIT_FAILURE);
  }
  file = new (memory) CountsFile{};
  counters = &file->counters;
  counters->pid.store(static_cast<std::uint64_t>(getpid()));
  counters->magic.store(kMagic);
  // Each log line reaches the reader when it is written, so that its counts match it.
  setvbuf(stdout, nullptr, _IOLBF, 0);
}

}  // namespace

extern "C" {

// Open MPI flushes stdout too (before a spawn): only the program's own flushes are snapshots.
int fflush(FILE* stream) {
  using Flush = int (*)(FILE*);
  static auto real = reinterpret_cast<Flush>(dlsym(RTLD_NEXT, "fflush"));
  if (counters && stream == stdout && called_by_program(__builtin_return_address(0))) {
    take_snapshot();
  }
  return real(stream);
}

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start_counting();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start_counting();
  return rc;
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Send(buf, count, type, dest, tag, comm); });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); });
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); });
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Isend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Issend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Irsend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  count_send(count, type);
  return in_transport([&] { return PMPI_Ibsend(buf, count, type, dest, tag, comm, request); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  if (counters) working();
  MPI_Status own;
  int rc = in_transport([&] { return PMPI_Recv(buf, count, type, source, tag, comm, &own); });
  if (counters && rc == MPI_SUCCESS) count_received(own);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (counters) working();
  MPI_Status own;
  int rc = in_transport([&] { return PMPI_Mrecv(buf, count, type, message, &own); });
  if (counters && rc == MPI_SUCCESS) count_received(own);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  count_send(sendcount, sendtype);
  MPI_Status own;
  int rc = in_transport([&] {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, &own);
  });
  if (counters && rc == MPI_SUCCESS) count_received(own);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  int rc = in_transport([&] { return PMPI_Irecv(buf, count, type, source, tag, comm, request); });
  remember_receive(rc, *request);
  return rc;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
               MPI_Request* request) {
  int rc = in_transport([&] { return PMPI_Imrecv(buf, count, type, message, request); });
  remember_receive(rc, *request);
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  if (counters) {
    std::lock_guard lock(receives_mutex);
    receives.erase(*request);
  }
  return PMPI_Request_free(request);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!counters) return PMPI_Test(request, flag, status);
  MPI_Request before = *request;
  MPI_Status own;
  int rc = timed_test([&] { return PMPI_Test(request, flag, &own); }, [&] { return *flag != 0; });
  if (rc == MPI_SUCCESS && *flag) count_completed(&before, nullptr, 1, &own, false);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!counters) return PMPI_Wait(request, status);
  working();
  MPI_Request before = *request;
  MPI_Status own;
  int rc = in_transport([&] { return PMPI_Wait(request, &own); });
  if (rc == MPI_SUCCESS) count_completed(&before, nullptr, 1, &own, false);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!counters) return PMPI_Testany(count, requests, index, flag, status);
  auto& before = saved_handles(requests, count);
  MPI_Status own;
  int rc = timed_test([&] { return PMPI_Testany(count, requests, index, flag, &own); },
                      [&] { return *flag != 0 && *index != MPI_UNDEFINED; });
  if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED) {
    count_completed(before.data(), index, 1, &own, false);
  }
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!counters) return PMPI_Waitany(count, requests, index, status);
  working();
  auto& before = saved_handles(requests, count);
  MPI_Status own;
  int rc = in_transport([&] { return PMPI_Waitany(count, requests, index, &own); });
  if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
    count_completed(before.data(), index, 1, &own, false);
  if (status != MPI_STATUS_IGNORE) *status = own;
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!counters) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  auto& before = saved_handles(requests, incount);
  auto& own = status_space(incount);
  int rc =
      timed_test([&] { return PMPI_Testsome(incount, requests, outcount, indices, own.data()); },
                 [&] { return *outcount != MPI_UNDEFINED && *outcount > 0; });
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED) {
    count_completed(before.data(), indices, *outcount, own.data(), false);
    if (statuses != MPI_STATUSES_IGNORE) std::copy(own.begin(), own.begin() + *outcount, statuses);
  }
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!counters) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  working();
  auto& before = saved_handles(requests, incount);
  auto& own = status_space(incount);
  int rc =
      in_transport([&] { return PMPI_Waitsome(incount, requests, outcount, indices, own.data()); });
  if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED) {
    count_completed(before.data(), indices, *outcount, own.data(), false);
    if (statuses != MPI_STATUSES_IGNORE) std::copy(own.begin(), own.begin() + *outcount, statuses);
  }
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!counters) return PMPI_Testall(count, requests, flag, statuses);
  auto& before = saved_handles(requests, count);
  auto& own = status_space(count);
  int rc = timed_test([&] { return PMPI_Testall(count, requests, flag, own.data()); },
                      [&] { return *flag != 0; });
  if (rc == MPI_SUCCESS && *flag) {
    count_completed(before.data(), nullptr, count, own.data(), true);
    if (statuses != MPI_STATUSES_IGNORE) std::copy(own.begin(), own.end(), statuses);
  }
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!counters) return PMPI_Waitall(count, requests, statuses);
  working();
  auto& before = saved_handles(requests, count);
  auto& own = status_space(count);
  int rc = in_transport([&] { return PMPI_Waitall(count, requests, own.data()); });
  if (rc == MPI_SUCCESS) {
    count_completed(before.data(), nullptr, count, own.data(), true);
    if (statuses != MPI_STATUSES_IGNORE) std::copy(own.begin(), own.end(), statuses);
  }
  return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (!counters) return PMPI_Iprobe(source, tag, comm, flag, status);
  return timed_test([&] { return PMPI_Iprobe(source, tag, comm, flag, status); },
                    [&] { return *flag != 0; });
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  if (!counters) return PMPI_Improbe(source, tag, comm, flag, message, status);
  return timed_test([&] { return PMPI_Improbe(source, tag, comm, flag, message, status); },
                    [&] { return *flag != 0; });
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  count_collective(count, type);
  return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  count_collective(count, type);
  return PMPI_Ibcast(buf, count, type, root, comm, request);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  count_collective(count, type);
  return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  count_collective(count, type);
  return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  count_collective(count, type);
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  count_collective(0, MPI_BYTE);
  return PMPI_Barrier(comm);
}

int MPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm* intercomm, int errcodes[]) {
  if (counters) {
    counters->spawn_calls.fetch_add(1, std::memory_order_relaxed);
    counters->spawned_processes.fetch_add(static_cast<std::uint64_t>(maxprocs));
  }
  return PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes);
}

int MPI_Comm_spawn_multiple(int count, char* commands[], char** argvs[], const int maxprocs[],
                            const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm* intercomm,
                            int errcodes[]) {
  if (counters) {
    counters->spawn_calls.fetch_add(1, std::memory_order_relaxed);
    for (int k = 0; k < count; ++k) {
      counters->spawned_processes.fetch_add(static_cast<std::uint64_t>(maxprocs[k]));
    }
  }
  return PMPI_Comm_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm, intercomm,
                                  errcodes);
}

}  // extern "C"
