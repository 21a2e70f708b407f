// fiber._fiber.Pool's fiber::Pool: called by several Python threads in turns, and destroyed
// before the master's runtime ends, whichever thread still holds it then.
#pragma once

#include <pybind11/pybind11.h>
#include <fiber/errors.hpp>
#include <fiber/pool.hpp>

#include <memory>
#include <mutex>

#include "turn_queue.hpp"

namespace fiber::python {

// A fiber::Pool that several Python threads may call, as multiprocessing's: a fiber::Pool is used
// by one thread at a time, so the calls take turns, each without the GIL (a thread waiting for
// its turn must not hold what the one in its turn may need: the feeder, the callbacks), and in the
// order they asked (turn_queue.hpp).
//
// At exit the runtime ends while a daemon thread may still be inside a pool call and hold the
// last reference to the pool: its fiber::Pool would then be destroyed during or after the
// runtime's end (a segfault in Dispatcher::release, 2 of 3 runs of a daemon thread inside
// map_reduce at exit). So every live pool is listed, and end_all(), called before the runtime
// ends, destroys each one's fiber::Pool in its turn; a call after that raises PoolClosed.
class PythonPool {
 public:
  explicit PythonPool(PoolOptions options);
  ~PythonPool();
  PythonPool(const PythonPool&) = delete;
  PythonPool& operator=(const PythonPool&) = delete;

  // call(pool) in this thread's turn; called with the GIL.
  template <class Call>
  auto in_turn(Call call) {
    pybind11::gil_scoped_release unlocked;
    return in_turn_without_gil(std::move(call));
  }

  // in_turn() for a caller that has released the GIL already.
  template <class Call>
  auto in_turn_without_gil(Call call) {
    std::lock_guard turn(turns_);
    if (!pool_) throw PoolClosed("fiber: the pool ended with the program (its runtime has ended)");
    return call(*pool_);
  }

  // work() in this thread's turn, whether or not the fiber::Pool still lives (what a call holds
  // of it, dropped); called without the GIL.
  template <class Work>
  void holding_turn(Work work) {
    std::lock_guard turn(turns_);
    work();
  }

  // Destroys every live pool's fiber::Pool, each in its turn; called without the GIL before the
  // runtime ends.
  static void end_all();

 private:
  TurnQueue turns_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace fiber::python
