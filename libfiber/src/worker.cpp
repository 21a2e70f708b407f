#include "worker.hpp"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "backoff.hpp"
#include "chunk.hpp"
#include "mpi/intercomm.hpp"
#include "protocol.hpp"
#include "task_process.hpp"

namespace fiber::detail {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// While it has work, a worker says so at least this often: the master's sign that it lives.
constexpr auto kHeartbeatInterval = 500ms;
// How often an idle worker looks for messages once quiet, and a parked one (~0 % CPU).
constexpr auto kIdlePoll = 1ms;
constexpr auto kParkedPoll = 10ms;

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int size = 0;
  MPI_Get_processor_name(name, &size);
  return std::string(name, size);
}

Bytes result_header(std::uint64_t chunk_id, std::uint32_t count, ChunkStatus status,
                    Clock::duration elapsed) {
  Bytes head;
  append_raw(head, ResultHeader{
                       chunk_id, count, status,
                       static_cast<std::uint64_t>(
                           std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count())});
  return head;
}

// The worker's MPI process: takes chunks from the master, runs them (in its task process when
// the pool isolates tasks, else itself), sends results, heartbeats and crash reports.
class Supervisor {
 public:
  explicit Supervisor(MPI_Comm parent) : master_(parent), channel_(parent) {}

  void serve() {
    Bytes hello;
    append_raw(hello, static_cast<std::int64_t>(getpid()));
    append_string(hello, this_process().host);
    channel_.send(MessageKind::hello, {hello});
    channel_.post_receive(&request_);
    while (!stopping_) {
      bool active = take_messages();
      if (stopping_) break;
      if (!running_ && !queue_.empty()) {
        start_next();
        active = true;
      }
      if (running_) active |= progress_running();
      send_heartbeat_if_due();
      channel_.progress_sends();
      if (active) {
        backoff_.activity();
      } else if (!running_) {
        backoff_.pause(parked_ ? kParkedPoll : kIdlePoll);
      }
    }
    process_.stop();
    channel_.wait_sends();
    master_.disconnect();
  }

 private:
  struct Running {
    Bytes body;
    RunHeader header;
    bool silent;         // an initializer replayed in a new task process: nobody waits for it
    Bytes result;        // ResultHeader room, then item records as they come
    std::size_t parsed;  // end of the last complete record in `result`
    std::uint32_t done = 0;
    Clock::time_point started;
    Clock::time_point item_started;
  };

  // Handles every message that has arrived; true if there was one.
  bool take_messages() {
    bool any = false;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      MPI_Test(&request_, &arrived, &status);
      if (!arrived) return any;
      any = true;
      auto message = channel_.on_received(status, &request_);
      if (!message) continue;
      switch (message->kind) {
        case MessageKind::shutdown:
          stopping_ = true;
          return true;
        case MessageKind::welcome:
          this_process().id = BodyReader(message->body).raw<std::int32_t>();
          parked_ = false;
          break;
        case MessageKind::run:
          parked_ = false;
          queue_.push_back(std::move(message->body));
          break;
        case MessageKind::drop:
          drop_all();
          break;
        case MessageKind::park:
          park();
          break;
        default:
          break;
      }
      channel_.post_receive(&request_);
    }
  }

  // The pool was terminated: queued chunks come back cancelled, a running one is killed.
  void drop_all() {
    for (const auto& body : queue_) send_cancelled(RunBody(body).header().chunk_id);
    queue_.clear();
    if (running_ && (running_->header.flags & kRunIsolated)) {
      process_.kill();
      if (!running_->silent) send_cancelled(running_->header.chunk_id);
      running_.reset();
    }
  }

  void send_cancelled(std::uint64_t chunk_id) {
    channel_.send(MessageKind::result,
                  {result_header(chunk_id, 0, ChunkStatus::cancelled, Clock::duration())});
  }

  // No pool holds this worker: end the task process (and with it the tasks' memory and the
  // pool's initializer state), give memory back, and sleep long between polls.
  void park() {
    process_.stop();
    initializer_.clear();
    malloc_trim(0);
    parked_ = true;
  }

  void start_next() {
    Bytes body = std::move(queue_.front());
    queue_.pop_front();
    RunBody run(body);
    bool isolated = run.header().flags & kRunIsolated;
    if (run.header().flags & kRunInitializer) {
      // A new pool: a fresh task process, which will replay this initializer if it is replaced.
      process_.stop();
      initializer_.clear();
      if (isolated) initializer_ = body;
    }
    if (!isolated) {
      run_here(run);
      return;
    }
    if (!process_.running()) {
      process_.start();
      if (!initializer_.empty() && !(run.header().flags & kRunInitializer)) {
        begin(Bytes(initializer_), /*silent=*/true);
        queue_.push_front(std::move(body));
        return;
      }
    }
    begin(std::move(body), /*silent=*/false);
  }

  // Runs a chunk in this process (the pool does not isolate tasks).
  void run_here(const RunBody& run) {
    auto started = Clock::now();
    auto result = std::make_shared<Bytes>(sizeof(ResultHeader));
    for (std::uint32_t i = 0; i < run.count(); ++i) runner_.run(run, i, *result);
    auto head = result_header(run.header().chunk_id, run.count(), ChunkStatus::complete,
                              Clock::now() - started);
    std::memcpy(result->data(), head.data(), head.size());
    channel_.send(MessageKind::result, {*result}, result);
    last_sent_ = Clock::now();
  }

  void begin(Bytes body, bool silent) {
    auto header = RunBody(body).header();
    auto now = Clock::now();
    running_ = Running{std::move(body),      header, silent, Bytes(sizeof(ResultHeader)),
                       sizeof(ResultHeader), 0,      now,    now};
    if (!process_.send(running_->body)) {
      finish(ChunkStatus::crashed, "the task process " + process_.kill());
    }
  }

  // Takes in what the task process wrote; ends the chunk when it is complete, or when the task
  // process died or passed the item's deadline. True if anything happened.
  bool progress_running() {
    Running& run = *running_;
    auto quiet = Clock::now() - run.item_started;
    // Wait on the pipe (the child wakes us when it writes), briefly: MPI messages need polling.
    auto wait = quiet < 1ms ? 0us : 200us;
    std::string death;
    std::size_t before = run.result.size();
    bool alive = process_.receive(run.result, wait, death);
    bool progressed = run.result.size() != before;
    while (run.result.size() - run.parsed >= sizeof(ItemStatus)) {
      ItemStatus status;
      std::memcpy(&status, run.result.data() + run.parsed, sizeof status);
      if (run.result.size() - run.parsed - sizeof status < status.size) break;
      run.parsed += sizeof status + status.size;
      ++run.done;
      run.item_started = Clock::now();
    }
    if (run.done == run.header.count) {
      finish(ChunkStatus::complete, {});
      return true;
    }
    if (!alive) {
      finish(ChunkStatus::crashed, "the task process " + death);
      return true;
    }
    auto timeout = std::chrono::milliseconds(run.header.timeout_ms);
    if (run.header.timeout_ms > 0 && Clock::now() - run.item_started > timeout) {
      process_.kill();
      finish(ChunkStatus::timed_out,
             "the task ran longer than its timeout of " +
                 std::to_string(run.header.timeout_ms / 1000.0).substr(0, 6) + " s and was killed");
      return true;
    }
    if (!progressed && wait.count() == 0) sched_yield();
    return progressed;
  }

  void finish(ChunkStatus status, const std::string& reason) {
    Running& run = *running_;
    if (!run.silent) {
      auto result = std::make_shared<Bytes>(std::move(run.result));
      result->resize(run.parsed);  // only complete records
      if (status == ChunkStatus::crashed || status == ChunkStatus::timed_out) {
        append_string(*result, reason);
      }
      auto head = result_header(run.header.chunk_id, run.done, status, Clock::now() - run.started);
      std::memcpy(result->data(), head.data(), head.size());
      channel_.send(MessageKind::result, {*result}, result);
      last_sent_ = Clock::now();
    }
    running_.reset();
  }

  void send_heartbeat_if_due() {
    if (!running_ && queue_.empty()) return;
    if (Clock::now() - last_sent_ < kHeartbeatInterval) return;
    channel_.send(MessageKind::heartbeat);
    last_sent_ = Clock::now();
  }

  mpi::Intercomm master_;
  Channel channel_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::deque<Bytes> queue_;  // run bodies received, not yet started
  std::optional<Running> running_;
  Bytes initializer_;  // the pool's run body (empty: none), replayed in each new task process
  TaskProcess process_;
  ItemRunner runner_;
  Backoff backoff_{10ms, 1ms};
  Clock::time_point last_sent_ = Clock::now();
  bool parked_ = false;
  bool stopping_ = false;
};

}  // namespace

WorkerInfo& this_process() {
  static WorkerInfo info{-1, host_name(), static_cast<long>(getpid())};
  return info;
}

void serve_as_worker(MPI_Comm parent) {
  Supervisor(parent).serve();
  MPI_Finalize();
  std::exit(0);
}

}  // namespace fiber::detail
