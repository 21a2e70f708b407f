// PartThreads: the threads of a wide learner (fiber-ppo --learner-cores), which compute the parts
// of each minibatch's gradient side by side. The calling thread is one of them; the others wait
// at a barrier between jobs, so a job costs two barrier crossings, not thread starts.
#pragma once

#include <barrier>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace fiber::ppo {

class PartThreads {
 public:
  // `threads` in all, the caller's included (threads - 1 are started); at least 1.
  explicit PartThreads(int threads);
  ~PartThreads();
  PartThreads(const PartThreads&) = delete;
  PartThreads& operator=(const PartThreads&) = delete;

  int size() const { return size_; }

  // Runs work(p) for every p in [0, parts): part p on thread p % size(), thread 0 being the
  // caller; returns when all are done. An exception of work is rethrown here (the lowest
  // thread's).
  void run(int parts, const std::function<void(int)>& work);

 private:
  void run_share(int thread);
  void serve(int thread);

  int size_;
  std::barrier<> start_, finish_;
  const std::function<void(int)>* work_ = nullptr;
  int parts_ = 0;
  bool stopping_ = false;
  std::vector<std::exception_ptr> errors_;  // one per thread
  std::vector<std::jthread> threads_;
};

}  // namespace fiber::ppo
