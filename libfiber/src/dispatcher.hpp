// The master's dispatcher: a thread that owns every MPI call after start-up. It starts workers
// (MPI_Comm_spawn, one process per call so that each can be handled alone, PLATFORM.md fact 8),
// lends them to pools, cuts the pools' jobs into chunks, keeps a few chunks in flight per worker
// (a pull with prefetch: a result is the worker's request for more), and stores results in the
// jobs as they arrive. Because it runs on its own thread, work progresses while the caller
// computes.
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fiber/detail/job.hpp"
#include "mpi/intercomm.hpp"
#include "pool_handle.hpp"
#include "protocol.hpp"

namespace fiber::detail {

class Dispatcher {
 public:
  // `worker_argv` are the arguments spawned workers get (the master's own, without argv[0]).
  explicit Dispatcher(std::vector<std::string> worker_argv);
  // Stops the thread after shutting every worker down. Pools must be gone.
  ~Dispatcher();

  // Lends `options.processes` workers to a new pool, spawning those the runtime lacks, and starts
  // the initializer on each; returns the pool and the initializer jobs to wait for.
  std::pair<std::shared_ptr<PoolHandle>, std::vector<std::shared_ptr<Job>>> open_pool(
      const PoolOptions& options);
  void submit(const std::shared_ptr<PoolHandle>& pool, std::shared_ptr<Job> job);
  // Fails the pool's pending work with PoolClosed and drops what its workers have queued.
  void terminate(const std::shared_ptr<PoolHandle>& pool);
  // Takes the workers back from a pool (after join or terminate); they park until a pool needs
  // them.
  void release(const std::shared_ptr<PoolHandle>& pool);

  int worker_count() const;

 private:
  struct InFlight {
    std::uint64_t chunk_id;
    std::shared_ptr<Job> job;
    std::size_t first;
    std::size_t count;
  };
  struct Worker {
    explicit Worker(MPI_Comm intercomm) : comm(intercomm), channel(intercomm) {}
    mpi::Intercomm comm;
    Channel channel;
    WorkerInfo info;
    PoolHandle* pool = nullptr;
    std::deque<InFlight> in_flight;
    Clock::time_point last_result{};  // when it last answered: a busy worker gets no prefetch
  };
  // Mean time per item of each task, measured on the workers, for chunk sizes and prefetch.
  struct TaskTiming {
    double seconds_per_item = 0;
    bool measured = false;
  };

  void loop();
  // Runs `command` on the dispatcher thread and waits for it; exceptions come back to the caller.
  template <class Command>
  auto call(Command command) -> decltype(command());
  void post(std::function<void()> command);

  int spawn_worker();
  void send_chunk(Worker& worker, const std::shared_ptr<Job>& job, std::size_t first,
                  std::size_t count);
  std::size_t chunk_size(const PoolHandle& pool, const Job& job) const;
  std::size_t in_flight_limit(const Job& job, std::size_t chunk) const;
  bool dispatch();
  bool poll_workers();
  void on_message(int worker_id, Message message);
  void on_result(Worker& worker, Message message);
  void return_if_drained(int worker_id);
  bool work_in_flight() const;
  void shutdown_workers();

  const std::vector<std::string> worker_argv_;
  std::string executable_;

  // Commands from other threads.
  std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::vector<std::function<void()>> inbox_;
  std::atomic<bool> inbox_filled_{false};  // for the loop's spin, without the lock
  bool stopping_ = false;

  // The dispatcher thread's state.
  std::vector<std::unique_ptr<Worker>> workers_;  // index = worker id
  std::vector<MPI_Request> receives_;             // index = worker id
  std::vector<int> parked_;                       // ids of workers no pool holds
  std::vector<std::shared_ptr<PoolHandle>> pools_;
  std::unordered_map<std::string, TaskTiming> timings_;
  std::uint64_t next_chunk_id_ = 1;
  std::atomic<int> worker_count_{0};

  std::thread thread_;
};

}  // namespace fiber::detail
