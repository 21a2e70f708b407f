// Graceful stop of an RL application on SIGTERM or SIGINT (Slurm's preemption or time-limit
// signal, Ctrl-C): the signal only records the request; the training loop asks stop_requested()
// between steps, writes its checkpoint, tears its pool down and exits with kExitPreempted.
//
//   fiber::Runtime runtime(argc, argv);
//   fiber::rl::install_stop_handlers();       // in the master, after the runtime
//   while (...) {
//     if (fiber::rl::stop_requested()) { save(...); return fiber::rl::kExitPreempted; }
//     ...
//   }
//
// Under Slurm the signal reaches the master through slurm/fiber-job.sh and fiberrun, which
// passes SIGTERM and SIGINT to the master alone (mpirun itself would end the whole job on
// SIGTERM); fiber-job.sh requeues the job when the application exits with kExitPreempted.
#pragma once

namespace fiber::rl {

// The exit status of a run stopped by a signal after writing its checkpoint: 75, EX_TEMPFAIL in
// <sysexits.h> ("temporary failure, the user is invited to retry"): run it again with
// --resume auto to continue. Distinct from 0 (done), 1 (error), 2 (bad input) and 128+N (killed).
inline constexpr int kExitPreempted = 75;

// Installs handlers for SIGTERM and SIGINT that record the request (async-signal-safe: they set
// an atomic flag, nothing else). A signal that arrives again is recorded again; the process goes
// on until the application stops. Safe to call more than once.
void install_stop_handlers();

// True once SIGTERM or SIGINT arrived after install_stop_handlers().
bool stop_requested();

// The name of the signal that asked for the stop ("SIGTERM", "SIGINT"), or "" if none did.
const char* stop_signal_name();

}  // namespace fiber::rl
