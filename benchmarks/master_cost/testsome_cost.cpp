// What one MPI_Testsome costs the master with n receives posted and none complete (the
// dispatcher's poll when nothing arrived): n receives on a duplicate of MPI_COMM_SELF with a tag
// nobody sends, tested kCalls times, CPU time of the process per call. One CSV line per n:
//
//   requests,ns_per_testsome,ns_per_request
//
//   ./testsome_cost [--requests 4,8,...]
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <vector>

#include "command_line.hpp"
#include "cpu_time.hpp"
#include "plain_mpi.hpp"

namespace {

constexpr int kCalls = 20'000;
constexpr int kNeverSentTag = 77;

using fiber_benchmarks::process_cpu_seconds;

double ns_per_testsome(MPI_Comm comm, int requests) {
  std::vector<MPI_Request> pending(static_cast<std::size_t>(requests));
  std::vector<char> buffers(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    MPI_Irecv(&buffers[i], 1, MPI_BYTE, 0, kNeverSentTag, comm, &pending[i]);
  }
  std::vector<int> indices(pending.size());
  std::vector<MPI_Status> statuses(pending.size());
  int completed = 0;
  double start = process_cpu_seconds();
  for (int call = 0; call < kCalls; ++call) {
    MPI_Testsome(requests, pending.data(), &completed, indices.data(), statuses.data());
  }
  double cpu = process_cpu_seconds() - start;
  for (auto& request : pending) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  return cpu * 1e9 / kCalls;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("What one MPI_Testsome over n posted receives costs", "testsome_cost");
  std::vector<int> request_counts{4, 8, 16, 32, 64, 128, 256, 512, 1024};
  app.add_option("--requests", request_counts, "numbers of posted receives")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;
  fiber_benchmarks::set_fiber_mpi_defaults();
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &comm);
  std::printf("requests,ns_per_testsome,ns_per_request\n");
  for (int requests : request_counts) {
    double ns = ns_per_testsome(comm, requests);
    std::printf("%d,%.1f,%.2f\n", requests, ns, ns / requests);
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
