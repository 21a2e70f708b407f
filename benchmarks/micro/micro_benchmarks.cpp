// The private layer's hot paths, one at a time, without MPI processes: what the dispatcher, a
// worker and a task process do per chunk and per item. Run with --benchmark_filter=NAME to pick
// one; benchmarks/README says more.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "caller/job_state.hpp"
#include "dispatch/silence_queue.hpp"
#include "dispatch/worker_queue.hpp"
#include "fiber/detail/job.hpp"
#include "fiber/serialization.hpp"
#include "fiber/task.hpp"
#include "wire/codec.hpp"
#include "wire/entry_list.hpp"
#include "wire/item_record.hpp"
#include "wire/result_entry.hpp"
#include "wire/run_entry.hpp"
#include "worker/item_runner.hpp"

namespace {

// A small entry, as the many small chunks (or their results) that share one message.
constexpr std::size_t kSmallEntryBytes = 48;
// Items per chunk in the chunk benchmarks: a typical automatic chunk of short tasks.
constexpr std::size_t kChunkItems = 64;
// A typical ES argument: a seed, an episode length and a parameter vector.
constexpr std::size_t kParameterCount = 1024;
constexpr int kEpisodeSteps = 1000;
// Pool sizes for the dispatcher's per-worker structures: their cost per event must not grow.
constexpr std::int64_t kFewestWorkers = 4;
constexpr std::int64_t kMostWorkers = 1024;
constexpr int kWorkersMultiplier = 4;

std::int64_t add_one(std::int64_t value) { return value + 1; }
FIBER_TASK(add_one);

// Fills Batches with small entries until each is full, as a master batching chunks for a worker.
void BM_BatchAdd(benchmark::State& state) {
  std::vector<char> entry(kSmallEntryBytes, 'x');
  fiber::Bytes prefix;
  fiber::detail::ByteWriter(prefix).value(std::uint64_t{7});
  std::int64_t entries = 0;
  for (auto _ : state) {
    fiber::detail::Batch batch(fiber::detail::MessageKind::run);
    while (!batch.full()) {
      batch.add({prefix, entry});
      ++entries;
    }
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(entries);
}
BENCHMARK(BM_BatchAdd);

// Walks a list body of small entries (the format Batch writes), as a receiver splits a batch.
void BM_ForEachEntry(benchmark::State& state) {
  fiber::Bytes list;
  std::vector<char> entry(kSmallEntryBytes, 'x');
  while (list.size() < fiber::detail::kBatchBytes) fiber::detail::append_entry(list, entry);
  std::int64_t entries = 0;
  for (auto _ : state) {
    std::size_t bytes = 0;
    fiber::detail::for_each_entry(list, [&](std::span<const char> one) {
      bytes += one.size();
      ++entries;
    });
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(entries);
}
BENCHMARK(BM_ForEachEntry);

// Reads a result entry: its header, its item records (the last one a failed item's error, its
// type and message), as the master decodes a result message.
void BM_ResultEntryReader(benchmark::State& state) {
  using namespace fiber::detail;
  const std::int64_t result = 1;
  fiber::Bytes entry = begin_result_entry();
  for (std::size_t i = 0; i + 1 < kChunkItems; ++i) {
    ItemRecordWriter record(entry);
    ByteWriter(entry).value(result);
    record.finish();
  }
  ItemRecordWriter failed(entry);
  failed.fail("std::invalid_argument", "a task's error message, of a typical length");
  failed.finish();
  finish_result_entry(entry, result_header(1, kChunkItems, ChunkStatus::complete, {}));
  for (auto _ : state) {
    ResultEntryReader reader(entry);
    std::uint64_t sizes = 0;
    ItemRecord record{};
    for (std::uint32_t i = 0; i < reader.header().count; ++i) {
      record = reader.next_item();
      sizes += record.bytes.size();
    }
    auto error = ItemError::decode(record.bytes);
    benchmark::DoNotOptimize(sizes);
    benchmark::DoNotOptimize(error);
  }
  state.SetItemsProcessed(state.iterations() * kChunkItems);
}
BENCHMARK(BM_ResultEntryReader);

// Stores one chunk of results into a fresh Job (its runtime side, JobState) and waits for it on
// this thread, as an apply_async or a small map whose results arrive in one message.
void BM_JobStoreAndWait(benchmark::State& state) {
  using fiber::detail::Job;
  using fiber::detail::JobState;
  auto payload = std::make_shared<const fiber::Bytes>(kChunkItems * sizeof(std::int64_t));
  std::vector<std::uint64_t> offsets(kChunkItems + 1);
  for (std::size_t i = 0; i <= kChunkItems; ++i) offsets[i] = i * sizeof(std::int64_t);
  fiber::Bytes arguments(payload->size());
  for (auto _ : state) {
    Job job("add_one", arguments, offsets, kChunkItems);
    std::vector<JobState::ItemResult> results(kChunkItems);
    for (std::size_t i = 0; i < kChunkItems; ++i) {
      results[i] = {true, i * sizeof(std::int64_t), sizeof(std::int64_t), nullptr};
    }
    job.state().store(0, results, payload);
    benchmark::DoNotOptimize(job.wait_all(std::nullopt));
  }
  state.SetItemsProcessed(state.iterations() * kChunkItems);
}
BENCHMARK(BM_JobStoreAndWait);

// Runs every item of a chunk of a trivial registered task, as a worker or its task process does.
void BM_ItemRunner(benchmark::State& state) {
  using namespace fiber::detail;
  std::vector<std::uint64_t> offsets;
  fiber::Bytes items;
  for (std::size_t i = 0; i < kChunkItems; ++i) {
    offsets.push_back(items.size());
    fiber::encode_into(items, std::int64_t(i));
  }
  offsets.push_back(items.size());
  fiber::Bytes body;
  RunEntryParts{RunHeader{1, 0, 0, 0, 0}, "add_one", offsets, items}.append_to(body);
  RunBody run(body);
  ItemRunner runner;
  fiber::Bytes records;
  for (auto _ : state) {
    records.clear();
    for (std::uint32_t i = 0; i < run.count(); ++i) runner.run(run, i, records);
    benchmark::DoNotOptimize(records.data());
  }
  state.SetItemsProcessed(state.iterations() * kChunkItems);
}
BENCHMARK(BM_ItemRunner);

// Encodes and decodes a call's arguments of numbers only (copied as raw bytes).
void BM_EncodeDecodeRaw(benchmark::State& state) {
  fiber::Bytes bytes;
  for (auto _ : state) {
    bytes.clear();
    fiber::encode_into(bytes, std::uint64_t{42}, kEpisodeSteps);
    auto [seed, steps] = fiber::decode_tuple<std::uint64_t, int>(bytes);
    benchmark::DoNotOptimize(seed);
    benchmark::DoNotOptimize(steps);
  }
}
BENCHMARK(BM_EncodeDecodeRaw);

// Encodes and decodes a typical ES argument through a Boost.Serialization archive.
void BM_EncodeDecodeArchive(benchmark::State& state) {
  std::vector<float> parameters(kParameterCount, 0.5f);
  fiber::Bytes bytes;
  for (auto _ : state) {
    bytes.clear();
    fiber::encode_into(bytes, std::uint64_t{42}, kEpisodeSteps, parameters);
    auto decoded = fiber::decode_tuple<std::uint64_t, int, std::vector<float>>(bytes);
    benchmark::DoNotOptimize(std::get<2>(decoded).data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}
BENCHMARK(BM_EncodeDecodeArchive);

// A pool's idle list as the scheduler uses it: the longest idle worker takes work, and is listed
// again once it answers.
void BM_WorkerQueueCycle(benchmark::State& state) {
  fiber::detail::WorkerQueue queue;
  for (int id = 0; id < static_cast<int>(state.range(0)); ++id) queue.push(id);
  for (auto _ : state) {
    int id = queue.pop();
    queue.push(id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WorkerQueueCycle)
    ->RangeMultiplier(kWorkersMultiplier)
    ->Range(kFewestWorkers, kMostWorkers);

// The silence queue as the master feeds it: every message from a busy worker of an isolated pool
// moves that worker to the back, then the front is looked at (the periodic check).
void BM_SilenceQueueHeard(benchmark::State& state) {
  using fiber::detail::Clock;
  const int workers = static_cast<int>(state.range(0));
  const auto timeout = std::chrono::seconds(10);
  const fiber::detail::SilenceQueue::Allowed allowed = [](Clock::duration t) { return t; };
  fiber::detail::SilenceQueue queue;
  auto heard = Clock::now();
  for (int id = 0; id < workers; ++id) queue.watch(id, timeout, heard);
  int next = 0;
  for (auto _ : state) {
    heard += std::chrono::microseconds(1);
    queue.watch(next, timeout, heard);
    next = (next + 1) % workers;
    benchmark::DoNotOptimize(queue.silent(heard, allowed));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SilenceQueueHeard)
    ->RangeMultiplier(kWorkersMultiplier)
    ->Range(kFewestWorkers, kMostWorkers);

}  // namespace

BENCHMARK_MAIN();
