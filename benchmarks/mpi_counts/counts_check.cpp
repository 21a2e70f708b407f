// Checks the counting library against a known exchange: the master spawns two copies of itself
// (two spawn calls), sends each a 100-byte message (MPI_Send) and 1,000 ints (MPI_Isend), and
// receives from each 300 bytes (MPI_Irecv, completed by MPI_Testsome), 50 doubles (MPI_Recv) and
// one message shaped like fiber's heartbeat (a header alone on the header tag); a receive it
// cancels must count nothing. Then it compares its counters file with that and
// prints one line; exit status 1 on a difference. Run it as the counted master:
//   mpirun -n 1 env LD_PRELOAD=libfiber_mpi_counts.so FIBER_MPI_COUNTS=PATH mpi_counts_check
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "counts_file.hpp"
#include "plain_mpi.hpp"
#include "wire/channel.hpp"

namespace {

constexpr const char* kChildFlag = "--counts-check-child";
constexpr int kCopies = 2;
constexpr int kSmallBytes = 100;
constexpr int kInts = 1000;
constexpr int kAnswerBytes = 300;
constexpr int kDoubles = 50;
enum Tag { kSmallTag = 1, kIntsTag, kAnswerTag, kDoublesTag, kNeverSentTag };
// fiber's heartbeat, as the counting library tells it (wire/channel.hpp: a MessageHeader alone).
constexpr int kHeartbeatTag = fiber::detail::kHeaderTag;
constexpr int kHeartbeatBytes = sizeof(fiber::detail::MessageHeader);

void child(MPI_Comm parent) {
  std::vector<char> small(kSmallBytes);
  std::vector<int> ints(kInts);
  MPI_Recv(small.data(), kSmallBytes, MPI_BYTE, 0, kSmallTag, parent, MPI_STATUS_IGNORE);
  MPI_Recv(ints.data(), kInts, MPI_INT, 0, kIntsTag, parent, MPI_STATUS_IGNORE);
  std::vector<char> answer(kAnswerBytes);
  std::vector<double> doubles(kDoubles);
  MPI_Send(answer.data(), kAnswerBytes, MPI_BYTE, 0, kAnswerTag, parent);
  MPI_Send(doubles.data(), kDoubles, MPI_DOUBLE, 0, kDoublesTag, parent);
  std::vector<char> heartbeat(kHeartbeatBytes);
  MPI_Send(heartbeat.data(), kHeartbeatBytes, MPI_BYTE, 0, kHeartbeatTag, parent);
  MPI_Comm_disconnect(&parent);
  MPI_Finalize();
}

// The exchange, as the master; the children's intercommunicators are disconnected after it.
void exchange(std::vector<MPI_Comm>& children) {
  std::vector<char> small(kSmallBytes);
  std::vector<int> ints(kInts);
  std::vector<std::vector<char>> answers(kCopies, std::vector<char>(kAnswerBytes));
  std::vector<double> doubles(kDoubles);
  std::vector<MPI_Request> receives(kCopies);
  for (int c = 0; c < kCopies; ++c) {
    MPI_Send(small.data(), kSmallBytes, MPI_BYTE, 0, kSmallTag, children[c]);
    MPI_Request send;
    MPI_Isend(ints.data(), kInts, MPI_INT, 0, kIntsTag, children[c], &send);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Irecv(answers[c].data(), kAnswerBytes, MPI_BYTE, 0, kAnswerTag, children[c], &receives[c]);
  }
  for (int done = 0; done < kCopies;) {
    int completed = 0;
    std::vector<int> indices(kCopies);
    MPI_Testsome(kCopies, receives.data(), &completed, indices.data(), MPI_STATUSES_IGNORE);
    if (completed != MPI_UNDEFINED) done += completed;
  }
  std::vector<char> heartbeat(kHeartbeatBytes);
  for (auto& comm : children) {
    MPI_Recv(doubles.data(), kDoubles, MPI_DOUBLE, 0, kDoublesTag, comm, MPI_STATUS_IGNORE);
    MPI_Recv(heartbeat.data(), kHeartbeatBytes, MPI_BYTE, 0, kHeartbeatTag, comm,
             MPI_STATUS_IGNORE);
  }
  MPI_Request never;
  MPI_Irecv(small.data(), kSmallBytes, MPI_BYTE, 0, kNeverSentTag, children[0], &never);
  MPI_Cancel(&never);
  MPI_Wait(&never, MPI_STATUS_IGNORE);
  for (auto& comm : children) MPI_Comm_disconnect(&comm);
}

const fiber_mpi_counts::Counters* map_counters(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return nullptr;
  void* memory = mmap(nullptr, sizeof(fiber_mpi_counts::Counters), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  return memory == MAP_FAILED ? nullptr : static_cast<const fiber_mpi_counts::Counters*>(memory);
}

}  // namespace

int main(int argc, char** argv) {
  fiber_benchmarks::set_fiber_mpi_defaults();
  if (MPI_Comm parent = fiber_benchmarks::start_if_spawned_copy(argc, argv, kChildFlag);
      parent != MPI_COMM_NULL) {
    child(parent);
    return EXIT_SUCCESS;
  }
  const char* path = std::getenv("FIBER_MPI_COUNTS");
  if (!path) {
    std::fprintf(stderr, "mpi_counts_check: FIBER_MPI_COUNTS is not set\n");
    return EXIT_FAILURE;
  }
  unlink(path);  // a file left by an earlier run must not pass for this one's
  MPI_Init(&argc, &argv);
  auto children = fiber_benchmarks::spawn_copies_of_self(kChildFlag, kCopies);
  exchange(children);
  const auto* counters = map_counters(path);
  if (!counters || counters->magic != fiber_mpi_counts::kMagic) {
    std::fprintf(stderr, "mpi_counts_check: %s holds no counters (is the library preloaded?)\n",
                 path);
    MPI_Finalize();
    return EXIT_FAILURE;
  }
  struct Expected {
    const char* name;
    std::uint64_t counted, expected;
  };
  const Expected expected[] = {
      {"sent messages", counters->sent_messages, 2 * kCopies},
      {"sent bytes", counters->sent_bytes, kCopies * (kSmallBytes + kInts * sizeof(int))},
      {"received messages", counters->received_messages, 3 * kCopies},
      {"received bytes", counters->received_bytes,
       kCopies * (kAnswerBytes + kDoubles * sizeof(double) + kHeartbeatBytes)},
      {"received heartbeats", counters->received_heartbeats, kCopies},
      {"spawn calls", counters->spawn_calls, kCopies},
      {"spawned processes", counters->spawned_processes, kCopies},
  };
  int wrong = 0;
  if (counters->transport_nanoseconds == 0) {
    std::fprintf(stderr, "mpi_counts_check: no CPU time counted inside MPI calls\n");
    ++wrong;
  }
  for (const auto& e : expected) {
    if (e.counted != e.expected) {
      std::fprintf(stderr, "mpi_counts_check: %s counted %llu, expected %llu\n", e.name,
                   static_cast<unsigned long long>(e.counted),
                   static_cast<unsigned long long>(e.expected));
      ++wrong;
    }
  }
  MPI_Finalize();
  if (wrong == 0) std::printf("mpi_counts_check: every count as expected\n");
  return wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
