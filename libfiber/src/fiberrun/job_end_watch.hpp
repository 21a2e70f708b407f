// When fiberrun ends a job whose ranks' programs have all exited but whose mpirun goes on
// (docs/platform.md, "A clean end"). A job that ends normally takes a while after its master:
// every worker finalizes (Open MPI's MPI_Finalize waits for all the workers of its spawn) and
// exits, each node's daemon reports its processes' ends, then mpirun exits. With many workers on
// few cores that takes longer than any fixed grace (1,024 workers on 2 cores: more than 10 s),
// while a job that truly hangs (mpirun waiting for a lost node's daemon, workers waiting for a
// master killed by a signal) must still be ended. So the grace grows with the job's processes
// left on this host when the programs ended, and every process of the job that ends meanwhile
// (progress) buys another quiet grace; a job in which nothing ends for that long is ended.
#pragma once

#include <chrono>
#include <cstddef>

namespace fiberrun {

class JobEndWatch {
 public:
  using Clock = std::chrono::steady_clock;

  // A job whose processes stopped ending this long ago is taken for hung (it was the whole
  // grace before: enough for a few hundred processes on 2 cores; 128 and 256 workers on 4
  // simulated nodes ended 0.4 and 1.6 s after their master).
  static constexpr auto kQuietGrace = std::chrono::seconds(10);
  // Added to the first grace per process of the job left on this host when the programs ended:
  // the first workers leave only once all of their spawn finalize, so that before the first
  // progress the job's size is all there is to go by. About ten times the 5.9 ms per process
  // measured at 256 workers on 2 cores (docs/platform.md, "A clean end").
  static constexpr auto kGracePerProcess = std::chrono::milliseconds(50);

  // The ranks' programs all ended at `when`, `processes` processes of the job (mpirun's
  // descendants) living on this host then.
  JobEndWatch(Clock::time_point when, std::size_t processes);

  // A look at the job at `now`: `processes` of it live on this host. Fewer than ever before is
  // progress.
  void look(Clock::time_point now, std::size_t processes);

  // Whether the job has had its grace at `now` and is to be ended.
  bool overdue(Clock::time_point now) const;

 private:
  Clock::time_point deadline_;
  std::size_t fewest_;  // the fewest processes seen so far
};

}  // namespace fiberrun
