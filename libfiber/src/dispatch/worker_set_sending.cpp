// WorkerSet's sends (worker_set.hpp): a chunk's run entry into a batch, alone, or into a lane,
// and the chunks each worker holds.
#include <algorithm>

#include "dispatch/worker_set.hpp"
#include "trace/hop_trace.hpp"

namespace fiber::detail {

RunHeader WorkerSet::run_header(const PoolHandle& pool, const JobState& job, std::uint64_t chunk_id,
                                std::uint32_t name_size, std::uint32_t count, std::uint32_t flags) {
  bool isolated = pool.options.isolation == Isolation::process;
  auto timeout = job.timeout().count() > 0 ? job.timeout() : pool.options.task_timeout;
  return {chunk_id,
          name_size,
          count,
          flags | (isolated ? kRunIsolated : 0u),
          static_cast<std::uint32_t>(timeout.count()),
          static_cast<std::uint32_t>(pool.options.maxtasksperchild.value_or(0)),
          heartbeat_ms(pool)};
}

std::uint32_t WorkerSet::heartbeat_ms(const PoolHandle& pool) {
  return static_cast<std::uint32_t>(std::max<std::chrono::milliseconds::rep>(
      1, pool.options.worker_timeout.count() / kHeartbeatsPerWorkerTimeout));
}

void WorkerSet::send(int id, MessageKind kind) {
  Worker& worker = *workers_[id];
  if (kind == MessageKind::drop && worker.lane) {
    // The worker kills the lane's task process; its chunks end cancelled here.
    worker.lane->cancel_all();
    close_lane(worker);
  }
  worker.channel.send(kind);
  // Both end the worker's lent sleep (after this ring): it polls MPI again.
  if (kind == MessageKind::drop || kind == MessageKind::park) worker.channel.ring_after_sends({});
  sending_.push(id);
}

void WorkerSet::send(int id, Batch& batch) {
  if (batch.empty()) return;
  batch.send(workers_[id]->channel);
  sending_.push(id);
}

void WorkerSet::send_chunk(int id, const std::shared_ptr<PoolHandle>& pool,
                           const std::shared_ptr<ScheduledJob>& scheduled, std::size_t first,
                           std::size_t count, std::uint32_t flags, Batch* batch,
                           Clock::time_point now) {
  Worker& worker = *workers_[id];
  std::uint64_t chunk_id = next_chunk_id_++;
  hop_trace::mark(hop_trace::Point::master_sent, chunk_id);
  send_entry(worker, MessageKind::run, {}, *pool, *scheduled, first, count, flags, chunk_id, batch);
  add_in_flight(worker, {chunk_id, scheduled, pool, first, count}, now);
}

void WorkerSet::send_entry(Worker& worker, MessageKind kind, std::span<const char> prefix,
                           const PoolHandle& pool, const ScheduledJob& scheduled, std::size_t first,
                           std::size_t count, std::uint32_t flags, std::uint64_t chunk_id,
                           Batch* batch) {
  const JobState& job = scheduled.state();
  RunHeader header = run_header(pool, job, chunk_id, static_cast<std::uint32_t>(job.task().size()),
                                static_cast<std::uint32_t>(count), flags);
  auto offsets = job.offsets(first, count);
  auto& relative = scratch_offsets_;
  relative.resize(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) relative[i] = offsets[i] - offsets[0];
  RunEntryParts entry{header, job.task(), relative, job.arguments(first, count)};
  if (kind == MessageKind::run && !(flags & (kRunInitializer | kRunRelayFallback)) &&
      lane_fits(worker, pool)) {
    send_to_lane(worker, pool, entry);
    return;
  }
  if (kind == MessageKind::run && batch && entry.items.size() <= kBatchedEntryBytes) {
    batch->add(entry);  // joins the worker's batch
    return;
  }
  // Alone: a run message is a list of one entry, a relay message has its prefix. The arguments
  // are sent in place (the job stays alive).
  Bytes list_prefix;
  if (kind == MessageKind::run) prefix = list_prefix = entry_size_prefix(entry.size());
  worker.channel.send(kind, {prefix, entry.head(), entry.items}, scheduled.job);
  sending_.push(worker.info.id);
}

void WorkerSet::add_in_flight(Worker& worker, InFlight chunk, Clock::time_point now) {
  // A worker that had nothing to do had no reason to talk: its silence starts now.
  if (worker.in_flight.empty()) worker.last_heard = now;
  if (!worker.busy) {
    worker.busy = true;
    ++busy_;
  }
  worker.in_flight.push_back(std::move(chunk));
  watch_silence(worker.info.id);
}

}  // namespace fiber::detail
