// Squares 1..100 on two workers and checks the sum.
#include <fiber/fiber.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

long square(long x) { return x * x; }
FIBER_TASK(square);

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  fiber::Pool pool({.processes = 2});
  std::vector<long> numbers(100);
  std::iota(numbers.begin(), numbers.end(), 1);
  auto squares = pool.map(square, numbers);
  long sum = std::accumulate(squares.begin(), squares.end(), 0L);
  std::printf("downstream: sum of squares 1..100 = %ld\n", sum);
  return sum == 338350 ? 0 : 1;
}
