// A second fiber::Runtime after the first has ended: refused with a fiber::Error that says why
// (MPI cannot start again in a process), which the program can catch, instead of MPI's abort.
// Prints "refused: <what>" and exits 0 then.
#include <fiber/fiber.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  { fiber::Runtime first(argc, argv); }
  try {
    fiber::Runtime second(argc, argv);
  } catch (const fiber::Error& error) {
    std::printf("refused: %s\n", error.what());
    return 0;
  }
  std::printf("a second runtime started\n");
  return 1;
}
