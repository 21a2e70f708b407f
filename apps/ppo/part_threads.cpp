#include "part_threads.hpp"

#include <stdexcept>
#include <string>

namespace fiber::ppo {

namespace {

int checked_count(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("PartThreads: " + std::to_string(threads) + " threads");
  }
  return threads;
}

}  // namespace

PartThreads::PartThreads(int threads)
    : size_(checked_count(threads)),
      start_(size_),
      finish_(size_),
      errors_(static_cast<std::size_t>(size_)) {
  for (int t = 1; t < size_; ++t) threads_.emplace_back([this, t] { serve(t); });
}

PartThreads::~PartThreads() {
  stopping_ = true;
  start_.arrive_and_wait();  // the barrier orders stopping_ before the threads read it
}

void PartThreads::run(int parts, const std::function<void(int)>& work) {
  work_ = &work;
  parts_ = parts;
  start_.arrive_and_wait();
  run_share(0);
  finish_.arrive_and_wait();
  work_ = nullptr;
  std::exception_ptr first;
  for (auto& error : errors_) {
    if (!first) first = error;
    error = nullptr;
  }
  if (first) std::rethrow_exception(first);
}

void PartThreads::run_share(int thread) {
  try {
    for (int p = thread; p < parts_; p += size_) (*work_)(p);
  } catch (...) {
    errors_[static_cast<std::size_t>(thread)] = std::current_exception();
  }
}

void PartThreads::serve(int thread) {
  for (;;) {
    start_.arrive_and_wait();
    if (stopping_) return;
    run_share(thread);
    finish_.arrive_and_wait();
  }
}

}  // namespace fiber::ppo
