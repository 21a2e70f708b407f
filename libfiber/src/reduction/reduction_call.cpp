// fiber::detail::ReductionCall: a map_reduce as jobs of the pool. Each node's chunks are one job
// of reduce_chunk items that only that host's workers take while the pool has any there; once
// it is done, one reduce_node item on that host folds them; the master folds the nodes' values in
// host order. A node whose partial results are lost (its combining worker found one missing, the
// host left the pool) has its chunks run again with their results returned, and the master folds
// them in the same order: the value keeps its bits.
#include "fiber/detail/reduction_call.hpp"

#include <fmt/format.h>

#include <atomic>
#include <exception>
#include <stdexcept>

#include "caller/job_state.hpp"
#include "fiber/detail/task_registry.hpp"
#include "fiber/errors.hpp"
#include "fiber/pool.hpp"
#include "log.hpp"
#include "reduction/reduction_plan.hpp"
#include "reduction/reduction_tasks.hpp"

namespace fiber::detail {
namespace {

std::string next_reduction_name() {
  static std::atomic<std::uint64_t> count{0};
  return fmt::format("r{}", count.fetch_add(1));
}

const std::string& chunk_task() {
  static const std::string name = task_name_of(address_of(&reduce_chunk));
  return name;
}

const std::string& node_task() {
  static const std::string name = task_name_of(address_of(&reduce_node));
  return name;
}

}  // namespace

struct ReductionCall::Progress {
  struct Node {
    ReductionBlock block;
    std::shared_ptr<Job> chunks;   // reduce_chunk items
    std::shared_ptr<Job> combine;  // reduce_node, once the chunks are done
    bool on_master = false;        // its partial results come back and the master folds them
    std::optional<Bytes> value;
  };

  Pool* pool;            // null once the pool is destroyed
  std::string timed_as;  // the chunks' run times are learnt under it: the user's task, or as said
  std::string task, operation, reduction;
  Bytes items;
  std::vector<std::uint64_t> offsets;
  std::vector<Node> nodes;
  std::optional<Bytes> value;
  std::exception_ptr error;
  // What reached the master: values folded by a node, partial results of chunks (the log says).
  std::size_t node_values = 0;
  std::size_t returned_chunks = 0;

  void submit(const std::shared_ptr<Job>& job) {
    if (!pool) throw PoolClosed("fiber: the pool was destroyed before this reduction was done");
    pool->submit(job);
  }

  // Submits the node's chunks: stored on its host, or (on_master) returned from any worker.
  void submit_chunks(Node& node) {
    Bytes arguments;
    std::vector<std::uint64_t> chunk_offsets{0};
    std::size_t begin = node.block.first;
    for (std::uint32_t k = 0; k < node.block.chunk_ends.size(); ++k) {
      std::size_t end = node.block.first + node.block.chunk_ends[k];
      ReduceChunk chunk{task,
                        operation,
                        reduction,
                        k,
                        node.on_master ? std::string() : node.block.host,
                        Bytes(items.begin() + static_cast<std::ptrdiff_t>(offsets[begin]),
                              items.begin() + static_cast<std::ptrdiff_t>(offsets[end])),
                        {}};
      for (std::size_t i = begin; i <= end; ++i)
        chunk.offsets.push_back(offsets[i] - offsets[begin]);
      encode_into(arguments, chunk);
      chunk_offsets.push_back(arguments.size());
      begin = end;
    }
    node.chunks =
        std::make_shared<Job>(chunk_task(), std::move(arguments), std::move(chunk_offsets), 1);
    node.chunks->state().time_as(timed_as);
    if (!node.on_master) node.chunks->state().run_on_host(node.block.host);
    node.combine.reset();
    submit(node.chunks);
  }

  // The chunks are done: their partial results folded by the master, or by a worker of the node.
  void chunks_done(Node& node) {
    std::vector<ChunkPartial> parts(node.block.chunk_ends.size());
    bool any_stored = false;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      try {
        parts[k] = node.chunks->decoded_result<ChunkPartial>(k);
      } catch (const TaskError& failed) {  // the user's task failed: named as in a map
        if (failed.task() != chunk_task()) throw;
        throw TaskError(task, failed.type(), failed.message(), failed.worker());
      }
      any_stored |= parts[k].stored;
      returned_chunks += parts[k].stored ? 0 : 1;
    }
    if (!any_stored) {
      Fold fold(operation);
      for (auto& part : parts) fold.add(std::move(part.value));
      node.value = fold.take();
      return;
    }
    Bytes arguments;
    encode_into(arguments, ReduceNode{operation, reduction, std::move(parts)});
    std::vector<std::uint64_t> one{0, arguments.size()};
    node.combine = std::make_shared<Job>(node_task(), std::move(arguments), std::move(one), 1);
    node.combine->state().run_on_host(node.block.host);
    submit(node.combine);
  }

  void combined(Node& node) {
    try {
      node.value = node.combine->decoded_result<Bytes>(0);
      ++node_values;
    } catch (const TaskError& failed) {
      if (failed.task() != node_task()) throw;
      if (failed.type() != kPartialMissing) {
        throw TaskError(operation, failed.type(), failed.message(), failed.worker());
      }
      node.on_master = true;  // its store lost a partial result: run its chunks again, returned
      submit_chunks(node);
    }
  }

  // Takes what the node's current job finished; the job to wait for, if it is not done.
  std::shared_ptr<Job> advance(Node& node) {
    while (!node.value) {
      auto& job = node.combine ? node.combine : node.chunks;
      if (!job->done()) return job;
      if (node.combine) {
        combined(node);
      } else {
        chunks_done(node);
      }
    }
    return nullptr;
  }
};

ReductionCall::ReductionCall(Pool& pool, std::string task, std::string operation, Bytes items,
                             std::vector<std::uint64_t> offsets, std::size_t chunksize,
                             std::string timed_as) {
  if (offsets.size() < 2) {
    throw std::invalid_argument("fiber: map_reduce of no items has no value");
  }
  if (!find_combiner(operation)) {
    throw std::invalid_argument(fmt::format(
        "fiber: map_reduce's operation '{}' must be registered in this process (FIBER_TASK), "
        "the master folds the nodes' values with it",
        operation));
  }
  if (timed_as.empty()) timed_as = task;
  progress_ = std::unique_ptr<Progress>(new Progress{&pool,
                                                     std::move(timed_as),
                                                     std::move(task),
                                                     std::move(operation),
                                                     next_reduction_name(),
                                                     std::move(items),
                                                     std::move(offsets),
                                                     {},
                                                     std::nullopt,
                                                     nullptr});
  std::vector<HostWorkers> hosts;  // one entry per worker: the plan counts them per host
  for (const auto& worker : pool.workers()) hosts.push_back({worker.host, 1});
  for (auto& block : plan_reduction(progress_->offsets.size() - 1, hosts, chunksize)) {
    progress_->nodes.push_back({std::move(block), nullptr, nullptr, false, std::nullopt});
  }
  for (auto& node : progress_->nodes) progress_->submit_chunks(node);
}

ReductionCall::~ReductionCall() = default;

bool ReductionCall::wait(std::optional<Clock::time_point> deadline) {
  auto& p = *progress_;
  while (!p.value && !p.error) {
    try {
      // Every node moves on to its next stage; then the first one not done is waited for.
      std::shared_ptr<Job> pending;
      for (auto& node : p.nodes) {
        auto job = p.advance(node);
        if (!pending) pending = std::move(job);
      }
      if (pending) {
        if (!pending->wait_all(deadline)) return false;
        continue;
      }
      Fold fold(p.operation);
      for (auto& node : p.nodes) fold.add(std::move(*node.value));
      p.value = fold.take();
      std::size_t chunks = 0;
      for (const auto& node : p.nodes) chunks += node.block.chunk_ends.size();
      log::debug(
          "reduction {} of '{}': {} node(s), {} chunk(s); {} node value(s) and {} chunk "
          "result(s) reached the master",
          p.reduction, p.task, p.nodes.size(), chunks, p.node_values, p.returned_chunks);
    } catch (...) {
      p.error = std::current_exception();
    }
  }
  return true;
}

void ReductionCall::orphan() {
  auto& p = *progress_;
  p.pool = nullptr;
  if (!p.value && !p.error) {
    p.error = std::make_exception_ptr(
        PoolClosed("fiber: the pool was destroyed before this reduction was done"));
  }
}

std::span<const char> ReductionCall::value() const {
  if (progress_->error) std::rethrow_exception(progress_->error);
  if (!progress_->value) throw std::logic_error("fiber: a reduction's value before it is there");
  return *progress_->value;
}

}  // namespace fiber::detail
