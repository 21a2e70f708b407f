#include "worker.hpp"

#include <cxxabi.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <typeinfo>

#include "backoff.hpp"
#include "fiber/task.hpp"
#include "mpi/intercomm.hpp"
#include "protocol.hpp"

namespace fiber::detail {
namespace {

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> readable(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && readable ? readable.get() : name;
}

// The type name of the exception being handled, whatever its type.
std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  return type ? demangle(type->name()) : "unknown exception";
}

void append_error(Bytes& out, std::string_view type, std::string_view message) {
  append_string(out, type);
  append_string(out, message);
}

// Runs one chunk in this process: each item's outcome is recorded, an item that throws does not
// stop the others.
class ChunkRunner {
 public:
  // Returns the result body's head (ResultHeader + statuses); the items' bytes go to `data`.
  Bytes run(std::span<const char> body, Bytes& data) {
    BodyReader reader(body);
    auto run = reader.raw<RunHeader>();
    auto name_bytes = reader.take(run.name_size);
    std::string_view name(name_bytes.data(), name_bytes.size());
    auto offsets_bytes = reader.take((run.count + 1) * sizeof(std::uint64_t));
    auto items = body.subspan(reader.position());

    const Invoker* invoker = lookup(name);
    Bytes head;
    head.resize(sizeof(ResultHeader) + run.count * sizeof(ItemStatus));
    auto started = std::chrono::steady_clock::now();
    for (std::uint32_t i = 0; i < run.count; ++i) {
      std::uint64_t begin, end;
      std::memcpy(&begin, offsets_bytes.data() + i * sizeof begin, sizeof begin);
      std::memcpy(&end, offsets_bytes.data() + (i + 1) * sizeof end, sizeof end);
      std::size_t before = data.size();
      ItemStatus status{0, 1};
      if (!invoker) {
        status.ok = 0;
        append_error(data, "fiber::UnknownTask",
                     "no task named '" + std::string(name) +
                         "' is registered in this worker; register it with FIBER_TASK(" +
                         std::string(name) + ") at namespace scope, before fiber::Runtime starts");
      } else {
        try {
          (*invoker)(items.subspan(begin, end - begin), data);
        } catch (const std::exception& error) {
          data.resize(before);
          status.ok = 0;
          append_error(data, current_exception_type(), error.what());
        } catch (...) {
          data.resize(before);
          status.ok = 0;
          append_error(data, current_exception_type(), "(not a std::exception)");
        }
      }
      status.size = data.size() - before;
      std::memcpy(head.data() + sizeof(ResultHeader) + i * sizeof(ItemStatus), &status,
                  sizeof status);
    }
    auto elapsed = std::chrono::steady_clock::now() - started;
    ResultHeader result{run.chunk_id, run.count, 0,
                        static_cast<std::uint64_t>(
                            std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count())};
    std::memcpy(head.data(), &result, sizeof result);
    return head;
  }

 private:
  const Invoker* lookup(std::string_view name) {
    if (name != cached_name_) {
      cached_name_ = name;
      cached_ = find_invoker(name);
    }
    return cached_;
  }
  std::string cached_name_;
  const Invoker* cached_ = nullptr;
};

Bytes cancelled_result(std::span<const char> body) {
  auto run = BodyReader(body).raw<RunHeader>();
  Bytes head;
  append_raw(head, ResultHeader{run.chunk_id, 0, 1, 0});
  return head;
}

std::string host_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int size = 0;
  MPI_Get_processor_name(name, &size);
  return std::string(name, size);
}

}  // namespace

WorkerInfo& this_process() {
  static WorkerInfo info{-1, host_name(), static_cast<long>(getpid())};
  return info;
}

void serve_as_worker(MPI_Comm parent) {
  using namespace std::chrono_literals;
  mpi::Intercomm master(parent);
  Channel channel(parent);
  {
    Bytes hello;
    append_raw(hello, static_cast<std::int64_t>(getpid()));
    append_string(hello, this_process().host);
    channel.send(MessageKind::hello, {hello});
  }
  MPI_Request request = MPI_REQUEST_NULL;
  channel.post_receive(&request);

  ChunkRunner runner;
  std::deque<Bytes> queue;  // run bodies received, not yet run
  Backoff backoff(10ms, 1ms);
  bool serving = true;
  while (serving) {
    // Take in every message that has arrived; wait for one only when there is nothing to run.
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      MPI_Test(&request, &arrived, &status);
      if (!arrived) {
        if (!queue.empty()) break;
        channel.progress_sends();
        backoff.pause();
        continue;
      }
      backoff.activity();
      auto message = channel.on_received(status, &request);
      if (!message) continue;
      if (message->kind == MessageKind::shutdown) {
        serving = false;
        break;
      }
      if (message->kind == MessageKind::welcome) {
        this_process().id = BodyReader(message->body).raw<std::int32_t>();
      } else if (message->kind == MessageKind::run) {
        queue.push_back(std::move(message->body));
      } else if (message->kind == MessageKind::drop) {
        for (const auto& body : queue) channel.send(MessageKind::result, {cancelled_result(body)});
        queue.clear();
      }
      channel.post_receive(&request);
    }
    if (!serving) break;
    auto data = std::make_shared<Bytes>();
    Bytes head = runner.run(queue.front(), *data);
    queue.pop_front();
    channel.send(MessageKind::result, {head, *data}, data);
    channel.progress_sends();
    backoff.activity();
  }
  channel.wait_sends();
  master.disconnect();
  MPI_Finalize();
  std::exit(0);
}

}  // namespace fiber::detail
