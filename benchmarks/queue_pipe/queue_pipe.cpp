// Queue items per second between two fiber::Processes (a producer putting --items ints, a
// consumer getting them: one message per item, and put_many / get_many in batches of --batch),
// and fiber::Pipe round trips per second between two Processes (--round-trips ping-pongs). The
// consumer and the pinger time themselves, from their first item to their last, so that starting
// the Processes is not counted. One CSV line per measure on stdout:
//
//   framework,measure,count,seconds,per_second
//
// queue_pipe.py runs it beside Python's multiprocessing.Queue and Pipe and prints the ratios.
// Run it directly (fiber::Runtime sets the MPI defaults): ./queue_pipe [--help]
#include <CLI/CLI.hpp>
#include <fiber/fiber.hpp>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "command_line.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kDefaultItems = 200'000;
constexpr int kDefaultRoundTrips = 20'000;
constexpr std::size_t kDefaultBatch = 1000;
constexpr int kStop = -1;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void produce(fiber::Queue<int> queue, int items, std::size_t batch) {
  if (batch <= 1) {
    for (int item = 0; item < items; ++item) queue.put(item);
    return;
  }
  std::vector<int> chunk;
  for (int item = 0; item < items; ++item) {
    chunk.push_back(item);
    if (chunk.size() == batch || item + 1 == items) {
      queue.put_many(chunk);
      chunk.clear();
    }
  }
}

// Gets `items` items; puts on `timing` its time from the first get's return to the last, and
// the items it got in that time.
void consume(fiber::Queue<int> queue, int items, std::size_t batch,
             fiber::Queue<std::pair<double, int>> timing) {
  auto take = [&] { return batch <= 1 ? (queue.get(), 1) : int(queue.get_many(batch).size()); };
  int first = take();
  auto start = Clock::now();  // from the first item: the producer's start is not counted
  int got = first;
  while (got < items) got += take();
  timing.put({seconds_since(start), got - first});
}

void pong(fiber::Connection<int> end) {
  for (int ball = end.recv(); ball != kStop; ball = end.recv()) end.send(ball + 1);
}

void ping(fiber::Connection<int> end, int round_trips, fiber::Queue<double> timing) {
  end.send(0);
  end.recv();  // the first round trip waits for the other Process to start: not counted
  auto start = Clock::now();
  for (int round = 0; round < round_trips; ++round) {
    end.send(round);
    end.recv();
  }
  timing.put(seconds_since(start));
  end.send(kStop);
}

}  // namespace

FIBER_TASK(produce);
FIBER_TASK(consume);
FIBER_TASK(pong);
FIBER_TASK(ping);

namespace {

struct Timed {
  int count = 0;
  double seconds = 0;
};

void report(const char* measure, Timed timed) {
  auto [count, seconds] = timed;
  std::printf("fiber,%s,%d,%.6f,%.1f\n", measure, count, seconds, count / seconds);
  std::fflush(stdout);
}

Timed queue_items(int items, std::size_t batch) {
  fiber::Queue<int> queue;
  fiber::Queue<std::pair<double, int>> timing;
  fiber::Process consumer(consume, queue, items, batch, timing);
  fiber::Process producer(produce, queue, items, batch);
  consumer.start();
  producer.start();
  producer.join();
  auto [seconds, timed_items] = timing.get();
  consumer.join();
  return {timed_items, seconds};
}

Timed pipe_round_trips(int round_trips) {
  auto [pinger_end, ponger_end] = fiber::Pipe<int>();
  fiber::Queue<double> timing;
  fiber::Process ponger(pong, ponger_end);
  fiber::Process pinger(ping, pinger_end, round_trips, timing);
  ponger.start();
  pinger.start();
  double seconds = timing.get();
  pinger.join();
  ponger.join();
  return {round_trips, seconds};
}

}  // namespace

int main(int argc, char** argv) {
  fiber::Runtime runtime(argc, argv);
  CLI::App app{"fiber::Queue items/s and fiber::Pipe round trips/s between two Processes",
               "queue_pipe"};
  int items = kDefaultItems, round_trips = kDefaultRoundTrips;
  std::size_t batch = kDefaultBatch;
  app.add_option("--items", items, "queue items per measure")->check(CLI::PositiveNumber);
  app.add_option("--round-trips", round_trips, "pipe round trips")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "items per put_many / get_many")->check(CLI::PositiveNumber);
  if (auto status = fiber_benchmarks::parse_flags(app, argc, argv)) return *status;

  report("queue_items", queue_items(items, 1));
  report("queue_items_batched", queue_items(items, batch));
  report("pipe_round_trips", pipe_round_trips(round_trips));
}
