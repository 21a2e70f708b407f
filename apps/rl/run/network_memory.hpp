// A typo-sized network (--hidden 20000 20000) refused at the start, with one line naming the
// estimate, instead of a run the OOM killer ends without a word.
//
// The estimate counts only the copies of the parameters the run holds at once on the master's
// node, each as doubles: the application says how many the master holds (parameters, Adam
// state, gradient, messages) and how many each worker does; workers on the node are the pool
// size, at most one per core of this machine (a batch system places no more on a node). It
// leaves out the rest of the run (environments, batches, the noise table), so what it refuses
// certainly does not fit.
//
//   fiber::rl::check_network_memory(app, {.parameters = fiber::rl::mlp_parameters({4, 64, 2}),
//                                         .master_copies = 10, .worker_copies = 4, .workers = 2});
#pragma once

#include <cstdint>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace fiber::rl {

// Parameters of a fully connected network with these layer sizes, inputs to outputs:
// the sum over layers of (inputs + 1) x outputs. In double: a typo can exceed 64 bits.
double mlp_parameters(const std::vector<long>& layer_sizes);

struct NetworkCopies {
  double parameters = 0;
  int master_copies = 0;  // held by the master's process
  int worker_copies = 0;  // held by each worker (its MPI process and task process together)
  int workers = 0;        // the pool size; 0: one per core
};

// rl::reject (one line, exit 2) if the estimate exceeds a share of this machine's memory.
void check_network_memory(const CLI::App& app, const NetworkCopies& copies);

}  // namespace fiber::rl
