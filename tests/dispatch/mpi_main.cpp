// The main of the dispatch tests: one MPI process (MPI_THREAD_SERIALIZED, as the runtime asks)
// around GoogleTest.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  MPI_Finalize();
  return status;
}
