// WorkerSet's side of the parked workers' standby task processes (worker_set.hpp; docs/design.md,
// "Standby task processes"): which initializer each worker keeps to run ahead, and whether its
// standby ran it since its latest park, so that a pool with the same initializer neither sends
// it nor waits for it.
#include "dispatch/worker_set.hpp"
#include "wire/messages.hpp"

namespace fiber::detail {

namespace {

bool same_call(const Call& a, const Call& b) {
  return a.task == b.task && a.arguments == b.arguments;
}

}  // namespace

bool WorkerSet::keeps_initializer(int id, const PoolHandle& pool) {
  Worker& worker = *workers_[id];
  const auto& ahead = pool.ahead_initializer;
  const bool keeps = ahead && worker.standby_ready && worker.kept_initializer &&
                     same_call(*worker.kept_initializer, *ahead);
  // (A pool whose initializer does not run ahead: the worker forgets its own at the pool's first
  // message, which is not `keep`.)
  worker.kept_initializer = ahead;
  worker.standby_ready = false;
  if (keeps) send(id, MessageKind::keep);
  return keeps;
}

void WorkerSet::on_standby(Worker& worker, const Message& message) {
  auto ready = decode_message<StandbyReady>(message.body);
  // The word of an earlier park's standby, or of a worker taken since, comes too late.
  if (worker.parked && !worker.dead && ready.park == worker.parks) worker.standby_ready = true;
}

}  // namespace fiber::detail
