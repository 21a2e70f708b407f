#include "python_pool.hpp"

#include <set>
#include <utility>

namespace fiber::python {
namespace {

// The pools whose fiber::Pool may still live. The mutex is held while one is destroyed, so that
// the runtime's end never runs beside a pool's.
std::mutex live_mutex;
std::set<PythonPool*> live;

}  // namespace

PythonPool::PythonPool(PoolOptions options) {
  {
    pybind11::gil_scoped_release unlocked;  // spawning workers takes a while
    pool_ = std::make_unique<Pool>(std::move(options));
  }
  std::lock_guard listed(live_mutex);
  live.insert(this);
}

PythonPool::~PythonPool() {
  pybind11::gil_scoped_release unlocked;  // its end may wait for threads that take the GIL
  std::lock_guard listed(live_mutex);
  live.erase(this);
  holding_turn([&] { pool_.reset(); });
}

void PythonPool::end_all() {
  std::lock_guard listed(live_mutex);
  for (PythonPool* pool : live) pool->holding_turn([&] { pool->pool_.reset(); });
  live.clear();
}

}  // namespace fiber::python
