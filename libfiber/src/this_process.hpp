// Who this process is in the job: its worker id (-1 on the master and before a welcome), host and
// pid. Every side asks it: queues and NodeArrays name their files and connections after it.
#pragma once

#include "fiber/errors.hpp"

namespace fiber::detail {

WorkerInfo& this_process();

}  // namespace fiber::detail
