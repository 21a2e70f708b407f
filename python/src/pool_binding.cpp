#include "pool_binding.hpp"

#include <pybind11/stl.h>
#include <fiber/pool.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "frames.hpp"
#include "interruptible_wait.hpp"
#include "python_errors.hpp"
#include "python_iterator_range.hpp"
#include "python_pool.hpp"
#include "python_task.hpp"
#include "released_on_end.hpp"
#include "shared_object.hpp"

namespace py = pybind11;

namespace fiber::python {
namespace {

using Outcomes = AsyncResult<std::vector<std::string>>;
using OutcomeStream = ResultStream<std::string>;

// Each outcome's frames (frames.hpp), over the string itself.
py::list as_frames_list(std::vector<std::string> outcomes) {
  py::list list;
  for (auto& outcome : outcomes) list.append(split_frames(std::move(outcome)));
  return list;
}

// `on_done(outcomes, None)` or `on_done(None, error)` on the pool's result-handler thread, with
// the GIL taken. What it raises is reported as unraisable: the next callbacks still run.
AsyncCallbacks<std::vector<std::string>> calling_back(std::optional<py::object> on_done) {
  if (!on_done || on_done->is_none()) return {};
  SharedObject shared(std::move(*on_done));
  auto call = [shared](py::object outcomes, py::object error) {
    try {
      shared.get()(std::move(outcomes), std::move(error));
    } catch (py::error_already_set& raised) {
      raised.discard_as_unraisable("a callback of a fiber pool's call");
    }
  };
  return {.callback =
              [call](const std::vector<std::string>& outcomes) {
                py::gil_scoped_acquire gil;
                call(as_frames_list(outcomes), py::none());  // a copy: get() decodes again
              },
          .error_callback =
              [call](std::exception_ptr error) {
                py::gil_scoped_acquire gil;
                call(py::none(), python_error(error));
              }};
}

using PythonStream = ReleasedOnEnd<OutcomeStream>;

using std::chrono::milliseconds;

// fiber's own options besides multiprocessing's (fiber/pool.py checks them and gives times in
// milliseconds); what fiber::Pool refuses is a std::invalid_argument, Python's ValueError.
// `initializer_runs_ahead`: the initializer is only the master's context, which parked workers
// may run ahead (fiber/_calls.py, encode_initializer).
std::unique_ptr<PythonPool> make_pool(int processes, const std::string& initializer,
                                      bool initializer_runs_ahead,
                                      std::optional<int> maxtasksperchild, int max_retries,
                                      std::int64_t task_timeout_ms, std::int64_t worker_timeout_ms,
                                      int min_workers, int max_workers,
                                      std::int64_t scale_down_after_ms, int cores, int gpus,
                                      std::uint64_t memory_bytes) {
  return std::make_unique<PythonPool>(
      PoolOptions{.processes = processes,
                  .initializer = fiber::call(&fiber_python_initializer, initializer),
                  .initializer_runs_ahead = initializer_runs_ahead,
                  .maxtasksperchild = maxtasksperchild,
                  .max_retries = max_retries,
                  .task_timeout = milliseconds(task_timeout_ms),
                  .worker_timeout = milliseconds(worker_timeout_ms),
                  .min_workers = min_workers,
                  .max_workers = max_workers,
                  .scale_down_after = milliseconds(scale_down_after_ms),
                  .shape = {.cores = cores, .memory_bytes = memory_bytes, .gpus = gpus}});
}

// submit(the task fiber_python_call), with a deadline per item if the call has one
// (fiber.with_timeout; 0: the pool's task_timeout), its run times learnt under the Python
// function's `timing` name (fiber/_calls.py, timing_name): every Python call runs this one task.
template <class Submit>
auto with_call_task(std::int64_t timeout_ms, const std::string& timing, Submit submit) {
  if (timeout_ms > 0) {
    return submit(
        fiber::timed_as(fiber::with_timeout(&fiber_python_call, milliseconds(timeout_ms)), timing));
  }
  return submit(fiber::timed_as(&fiber_python_call, timing));
}

Outcomes map_async(PythonPool& pool, const py::list& calls, std::size_t chunksize,
                   std::optional<py::object> on_done, std::int64_t timeout_ms,
                   const std::string& timing) {
  std::vector<std::string> joined;
  joined.reserve(calls.size());
  for (py::handle call : calls) joined.push_back(join_frames(call));
  auto callbacks = calling_back(std::move(on_done));
  return pool.in_turn([&](Pool& turn) {
    return with_call_task(timeout_ms, timing, [&](const auto& task) {
      return turn.map_async(task, joined, chunksize, std::move(callbacks));
    });
  });
}

std::unique_ptr<PythonStream> imap(PythonPool& pool, py::iterator calls, std::size_t chunksize,
                                   bool ordered, std::int64_t timeout_ms,
                                   const std::string& timing) {
  PythonIteratorRange range(std::move(calls));
  auto stream = pool.in_turn([&](Pool& turn) {  // the feeder thread starts reading at once
    return with_call_task(timeout_ms, timing, [&](const auto& task) {
      return ordered ? turn.imap(task, std::move(range), chunksize)
                     : turn.imap_unordered(task, std::move(range), chunksize);
    });
  });
  return std::make_unique<PythonStream>(std::make_unique<OutcomeStream>(std::move(stream)));
}

bool wait(const Outcomes& outcomes, std::optional<double> timeout) {
  return wait_interruptibly([&](auto slice) { return outcomes.wait(slice); }, timeout);
}

py::list get(const Outcomes& outcomes, std::optional<double> timeout) {
  std::vector<std::string> got;
  // Taken in the same slice as the wait that found it there: one release of the GIL, not two.
  bool there = wait_interruptibly(
      [&](auto slice) {
        if (!outcomes.wait(slice)) return false;
        got = outcomes.get();  // decodes, or throws fiber's error for the call
        return true;
      },
      timeout);
  if (!there) throw TimeoutError("fiber: result not ready within the timeout");
  return as_frames_list(std::move(got));
}

py::object next(PythonStream& stream, std::optional<double> timeout) {
  std::optional<std::string> outcome;
  // Nothing within a slice leaves the stream unchanged; an item's TimeoutError is thrown.
  bool there = wait_interruptibly(
      [&](auto slice) { return stream.object->next_within(slice, outcome); }, timeout);
  if (!there) throw TimeoutError("fiber: no result within the timeout");
  if (!outcome) return py::none();
  return split_frames(std::move(*outcome));
}

template <void (Pool::*Method)()>
void in_turn(PythonPool& pool) {
  pool.in_turn([](Pool& turn) { (turn.*Method)(); });
}

// Pool::join in slices, each in its own turn: Ctrl-C ends the wait with KeyboardInterrupt, the
// pool still closed (its work goes on until it is joined again or terminated), and other threads
// may take turns in between.
void join(PythonPool& pool) {
  wait_interruptibly(
      [&](auto slice) {
        return pool.in_turn_without_gil([&](Pool& turn) { return turn.join(slice); });
      },
      std::nullopt);
}

// A map_reduce's value (fiber/_reductions.py: the partial results' bytes), waited for as get()
// waits. The reduction moves on in its caller's waits, which submit to the pool: they take the
// pool's turn, a slice at a time, so that other threads' calls go on between the slices. The
// master's fold runs the Python operation, which takes the GIL (python_task.cpp).
py::bytes map_reduce(PythonPool& pool, const std::vector<std::string>& calls, std::size_t chunksize,
                     const std::string& timing) {
  std::optional<Reduction<std::string>> reduction = pool.in_turn([&](Pool& turn) {
    return turn.map_reduce_async(fiber::timed_as(&fiber_python_reduce_item, timing), calls,
                                 &fiber_python_combine, chunksize);
  });
  struct ReleasedInTurn {  // however the wait ends (Ctrl-C too): dropped as the pool's calls are
    PythonPool& pool;
    std::optional<Reduction<std::string>>& reduction;
    ~ReleasedInTurn() {
      py::gil_scoped_release unlocked;
      pool.holding_turn([&] { reduction.reset(); });
    }
  } released{pool, reduction};
  wait_interruptibly(
      [&](auto slice) {
        return pool.in_turn_without_gil([&](Pool&) { return reduction->wait(slice); });
      },
      std::nullopt);
  std::string value = pool.in_turn([&](Pool&) { return reduction->get(); });
  return py::bytes(value);
}

py::dict stats(PythonPool& pool) {
  PoolStats counted = pool.in_turn([](Pool& turn) { return turn.stats(); });
  py::dict fields;
  fields["workers"] = counted.workers;
  fields["parked_workers"] = counted.parked_workers;
  fields["tasks_completed"] = counted.tasks_completed;
  fields["tasks_failed"] = counted.tasks_failed;
  fields["tasks_retried"] = counted.tasks_retried;
  fields["crashes"] = counted.crashes;
  fields["timeouts"] = counted.timeouts;
  fields["workers_lost"] = counted.workers_lost;
  return fields;
}

// (id, host, pid) of each of the pool's workers.
std::vector<std::tuple<int, std::string, long>> workers(PythonPool& pool) {
  auto infos = pool.in_turn([](Pool& turn) { return turn.workers(); });
  std::vector<std::tuple<int, std::string, long>> listed;
  for (const auto& info : infos) listed.emplace_back(info.id, info.host, info.pid);
  return listed;
}

}  // namespace

void bind_pool(py::module_& module) {
  py::class_<Outcomes>(module, "Outcomes",
                       "The outcomes of a map_async call (fiber::AsyncResult), as frames.")
      .def("get", &get, py::arg("timeout") = py::none())
      .def("wait", &wait, py::arg("timeout") = py::none())
      .def("ready", &Outcomes::ready)
      .def("successful", &Outcomes::successful);
  py::class_<PythonStream>(module, "OutcomeStream",
                           "The outcomes of an imap call (fiber::ResultStream), as frames.")
      .def("next", &next, py::arg("timeout") = py::none());
  py::class_<PythonPool>(module, "Pool", "fiber::Pool running Python calls (fiber/_calls.py).")
      .def(py::init(&make_pool), py::arg("processes"), py::arg("initializer"),
           py::arg("initializer_runs_ahead"), py::arg("maxtasksperchild"), py::arg("max_retries"),
           py::arg("task_timeout_ms"), py::arg("worker_timeout_ms"), py::arg("min_workers"),
           py::arg("max_workers"), py::arg("scale_down_after_ms"), py::arg("cores"),
           py::arg("gpus"), py::arg("memory_bytes"))
      .def("map_async", &map_async, py::arg("calls"), py::arg("chunksize"), py::arg("on_done"),
           py::arg("timeout_ms"), py::arg("timing"))
      .def("imap", &imap, py::arg("calls"), py::arg("chunksize"), py::arg("ordered"),
           py::arg("timeout_ms"), py::arg("timing"))
      .def("map_reduce", &map_reduce, py::arg("calls"), py::arg("chunksize"), py::arg("timing"))
      .def(
          "broadcast",
          [](PythonPool& pool, const std::string& broadcast) {
            pool.in_turn([&](Pool& turn) { turn.broadcast(&fiber_python_broadcast, broadcast); });
          },
          py::arg("broadcast"))
      .def(
          "resize",
          [](PythonPool& pool, int processes) {
            pool.in_turn([&](Pool& turn) { turn.resize(processes); });
          },
          py::arg("processes"))
      .def("stats", &stats)
      .def("size",
           [](PythonPool& pool) { return pool.in_turn([](Pool& turn) { return turn.size(); }); })
      .def("workers", &workers)
      .def("close", &in_turn<&Pool::close>)
      .def("join", &join)
      .def("terminate", &in_turn<&Pool::terminate>);
}

}  // namespace fiber::python
