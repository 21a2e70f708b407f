#include "pool_binding.hpp"

#include <pybind11/stl.h>
#include <fiber/pool.hpp>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frames.hpp"
#include "interruptible_wait.hpp"
#include "python_errors.hpp"
#include "python_iterator_range.hpp"
#include "python_task.hpp"
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

// A C++ object whose destructor may wait for threads that take the GIL (a pool's end, a stream's
// feeder): destroyed with the GIL released.
template <class T>
struct ReleasedOnEnd {
  explicit ReleasedOnEnd(std::unique_ptr<T> owned) : object(std::move(owned)) {}
  ~ReleasedOnEnd() {
    py::gil_scoped_release unlocked;
    object.reset();
  }
  ReleasedOnEnd(const ReleasedOnEnd&) = delete;
  ReleasedOnEnd& operator=(const ReleasedOnEnd&) = delete;
  std::unique_ptr<T> object;
};

using PythonStream = ReleasedOnEnd<OutcomeStream>;

// A fiber::Pool that several Python threads may call, as multiprocessing's: a fiber::Pool is used
// by one thread at a time, so the calls take turns, each without the GIL (a thread waiting for
// its turn must not hold what the one in its turn may need: the feeder, the callbacks).
class PythonPool {
 public:
  explicit PythonPool(PoolOptions options) {
    py::gil_scoped_release unlocked;  // spawning workers takes a while
    pool_.emplace(std::make_unique<Pool>(std::move(options)));
  }

  template <class Call>
  auto in_turn(Call call) {
    py::gil_scoped_release unlocked;
    std::lock_guard turn(mutex_);
    return call(*pool_->object);
  }

 private:
  std::mutex mutex_;
  std::optional<ReleasedOnEnd<Pool>> pool_;
};

std::unique_ptr<PythonPool> make_pool(int processes, const std::string& initializer,
                                      std::optional<int> maxtasksperchild) {
  return std::make_unique<PythonPool>(
      PoolOptions{.processes = processes,
                  .initializer = fiber::call(&fiber_python_initializer, initializer),
                  .maxtasksperchild = maxtasksperchild});
}

Outcomes map_async(PythonPool& pool, const py::list& calls, std::size_t chunksize,
                   std::optional<py::object> on_done) {
  std::vector<std::string> joined;
  joined.reserve(calls.size());
  for (py::handle call : calls) joined.push_back(join_frames(call));
  auto callbacks = calling_back(std::move(on_done));
  return pool.in_turn([&](Pool& turn) {
    return turn.map_async(&fiber_python_call, joined, chunksize, std::move(callbacks));
  });
}

std::unique_ptr<PythonStream> imap(PythonPool& pool, py::iterator calls, std::size_t chunksize,
                                   bool ordered) {
  PythonIteratorRange range(std::move(calls));
  auto stream = pool.in_turn([&](Pool& turn) {  // the feeder thread starts reading at once
    return ordered ? turn.imap(&fiber_python_call, std::move(range), chunksize)
                   : turn.imap_unordered(&fiber_python_call, std::move(range), chunksize);
  });
  return std::make_unique<PythonStream>(std::make_unique<OutcomeStream>(std::move(stream)));
}

bool wait(const Outcomes& outcomes, std::optional<double> timeout) {
  return wait_interruptibly([&](auto slice) { return outcomes.wait(slice); }, timeout);
}

py::list get(const Outcomes& outcomes, std::optional<double> timeout) {
  if (!wait(outcomes, timeout)) throw TimeoutError("fiber: result not ready within the timeout");
  std::vector<std::string> got;
  {
    py::gil_scoped_release unlocked;
    got = outcomes.get();  // there: decodes, or throws fiber's error for the call
  }
  return as_frames_list(std::move(got));
}

py::object next(PythonStream& stream, std::optional<double> timeout) {
  std::optional<std::string> outcome;
  bool there = wait_interruptibly(
      [&](auto slice) {
        try {
          outcome = stream.object->next(slice);
          return true;
        } catch (const TimeoutError&) {  // nothing within the slice: the stream is unchanged
          return false;
        }
      },
      timeout);
  if (!there) throw TimeoutError("fiber: no result within the timeout");
  if (!outcome) return py::none();
  return split_frames(std::move(*outcome));
}

template <void (Pool::*Method)()>
void in_turn(PythonPool& pool) {
  pool.in_turn([](Pool& turn) { (turn.*Method)(); });
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
           py::arg("maxtasksperchild"))
      .def("map_async", &map_async, py::arg("calls"), py::arg("chunksize"), py::arg("on_done"))
      .def("imap", &imap, py::arg("calls"), py::arg("chunksize"), py::arg("ordered"))
      .def("size",
           [](PythonPool& pool) { return pool.in_turn([](Pool& turn) { return turn.size(); }); })
      .def("close", &in_turn<&Pool::close>)
      .def("join", &in_turn<&Pool::join>)
      .def("terminate", &in_turn<&Pool::terminate>);
}

}  // namespace fiber::python
