// WorkerSet's parked workers lending their slots to a wider shape (worker_set.hpp): workers end
// only with the runtime (docs/platform.md, "A process that exits can hang a later spawn"), so a
// stage of wide workers after a stage of narrow ones re-shapes parked narrow ones instead of
// spawning beyond the allocation (docs/design.md, "Parked workers lend their slots").
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/worker_set.hpp"

namespace fiber::detail {

int WorkerSet::parked_serving(const WorkerShape& shape) const {
  int serving = 0;
  for (int id : parked_) {
    if (workers_[id]->shape == shape && !workers_[id]->lending_to) ++serving;
  }
  return serving;
}

int WorkerSet::slots_held(const Worker& worker) const {
  if (worker.dead || worker.lending_to) return 0;
  int slots = slots_of(worker.spawned_as);
  for (int lender : worker.lenders) {
    if (!workers_[lender]->dead) slots += slots_of(workers_[lender]->spawned_as);
  }
  return slots;
}

void WorkerSet::give_back_slots(int id) {
  Worker& worker = *workers_[id];
  worker.shape = worker.spawned_as;
  for (int lender : std::exchange(worker.lenders, {})) workers_[lender]->lending_to.reset();
}

void WorkerSet::take_back_lent_slots(const WorkerShape& shape, int wanted) {
  for (int id : parked_) {
    if (wanted <= 0) return;
    const Worker& worker = *workers_[id];
    if (worker.shape == worker.spawned_as || worker.shape == shape) continue;
    int serving = worker.spawned_as == shape ? 1 : 0;
    for (int lender : worker.lenders) serving += workers_[lender]->spawned_as == shape ? 1 : 0;
    // Also those of no use to `shape` as they are, if it is wider than them: lend_slots_to()
    // re-shapes them for it.
    bool lendable = shape.cores > 0 && slots_of(worker.spawned_as) < slots_of(shape);
    if (serving == 0 && !lendable) continue;
    give_back_slots(id);
    wanted -= serving;
  }
}

void WorkerSet::lend_slots_to(const WorkerShape& shape, int wanted) {
  // Only shapes with cores: their workers are spawned unbound, and offer all their node's cores
  // (worker_placement.hpp); a worker of the default shape offers only where Open MPI bound it.
  if (shape.cores == 0) return;
  const int needed = slots_of(shape);
  std::map<std::string, std::vector<int>> narrower_on;  // host -> its parked narrower workers
  for (int id : parked_) {
    const Worker& worker = *workers_[id];
    if (worker.dead || worker.lending_to || worker.shape != worker.spawned_as ||
        worker.spawned_as.cores == 0 || slots_of(worker.spawned_as) >= needed) {
      continue;
    }
    narrower_on[worker.info.host].push_back(id);
  }
  for (auto& [host, ids] : narrower_on) {
    while (wanted > 0) {
      std::size_t taken = 0;
      int slots = 0;
      for (; taken < ids.size() && slots < needed; ++taken) {
        slots += slots_of(workers_[ids[taken]]->spawned_as);
      }
      if (slots < needed) break;
      Worker& wide = *workers_[ids.front()];
      std::string missing;
      if (!place_on_its_node(wide, shape, missing)) break;  // the node's cores are in use
      wide.shape = shape;
      for (std::size_t i = 1; i < taken; ++i) {
        wide.lenders.push_back(ids[i]);
        workers_[ids[i]]->lending_to = ids.front();
      }
      ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(taken));
      --wanted;
    }
  }
}

}  // namespace fiber::detail
