// The MPI settings this stack needs, in one place: used by fiber::Runtime before MPI_Init and by
// the fiberrun launcher before it starts mpirun (docs/platform.md, "A program can set its own
// launch settings"; each setting cites its own section). A setting already in the environment is
// left alone.
#pragma once

namespace fiber::detail {

// True unless a batch system or a hostfile says the job spans machines. FIBER_LOCAL=0/1 decides
// when set.
bool runs_locally();

// Whether more processes than slots may be started: FIBER_OVERSUBSCRIBE=0/1 when set, else only
// when running locally.
bool oversubscription_allowed();

// Sets the defaults as environment variables (OMPI_*), without overriding the user's.
void apply_launch_defaults();

}  // namespace fiber::detail
