#!/usr/bin/env bash
# libfiber.so exports its public API and nothing of its insides:
#   check_exports.sh LIBFIBER_SO INCLUDE_DIR
# - every exported symbol belongs to a class or a function that INCLUDE_DIR's headers mark
#   FIBER_EXPORT (so a new internal class is caught without being named here);
# - none names an internal class, also as a template argument (the list below);
# - the API that user code links against is there.
set -uo pipefail
library=$1
include=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

symbols=$(nm -DC --defined-only "$library" | cut -d' ' -f3-) || fail "nm cannot read $library"
[[ -n $symbols ]] || fail "$library exports nothing"

# Names the headers export: "class FIBER_EXPORT Name", "FIBER_EXPORT ... name(".
exported=$(grep -rhoE '(class|struct) FIBER_EXPORT [A-Za-z_]+|^FIBER_EXPORT [^(;]*[ &*][A-Za-z_]+\(' \
  "$include" | sed -E 's/\($//; s/.*[ &*]//' | sort -u)
[[ -n $exported ]] || fail "no FIBER_EXPORT in $include"

strays=""
while IFS= read -r symbol; do
  name=${symbol#typeinfo name for }
  name=${name#typeinfo for }
  name=${name#vtable for }
  name=${name%%(*}
  name=${name%%\[abi:*}
  owner=${name#fiber::}
  owner=${owner#detail::}
  owner=${owner%%::*}
  grep -qxF "$owner" <<<"$exported" || strays+="$symbol"$'\n'
done <<<"$symbols"
[[ -z $strays ]] || fail "exported, but not marked FIBER_EXPORT in $include:"$'\n'"$strays"

internal='Dispatcher|Channel|PoolHandle|TaskProcess|ItemRunner|Backoff|Batch|ByteReader|ByteWriter|RunBody|ProtocolError|Supervisor|Intercomm|RuntimeState|ProgressLock'
if grep -E "fiber::(detail::|mpi::)?($internal)\b|fiber::(mpi|log)::" <<<"$symbols"; then
  fail "internal classes are exported (above)"
fi

for api in 'fiber::Runtime::Runtime(int, char\*\*)' 'fiber::Pool::Pool(fiber::PoolOptions)' \
  'fiber::this_worker()' 'typeinfo for fiber::Error' 'typeinfo for fiber::TaskError' \
  'fiber::detail::TaskRegistrar::TaskRegistrar' 'fiber::detail::Job::wait_all' \
  'fiber::detail::SharedSegment::open' 'fiber::detail::task_name_of'; do
  grep -q "^$api" <<<"$symbols" || fail "'$api' is not exported"
done
echo "ok: $(wc -l <<<"$symbols") symbols exported, all of them marked FIBER_EXPORT"
