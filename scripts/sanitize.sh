#!/usr/bin/env bash
# The sanitizer runs, after the suite (.ci/run runs this script):
# - ThreadSanitizer: the unit tests (tests/unit, one process, no MPI), built into TSAN_BUILD_DIR
#   (default: build-tsan/).
# - AddressSanitizer and UndefinedBehaviorSanitizer: libfiber and its MPI tests, built into
#   BUILD_DIR (default: build-sanitize/), and the core tests run (real MPI processes: the master,
#   its spawned workers and their task processes all run instrumented). Leak checking is off:
#   Open MPI's own allocations at exit are not ours to free.
#   scripts/sanitize.sh [ctest options for the MPI tests]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# ThreadSanitizer. Any report fails the run, whichever test or forked task process it comes from
# (a report alone need not fail its test).
tsan_dir=${TSAN_BUILD_DIR:-$root/build-tsan}
tsan="-fsanitize=thread"
cmake -S "$root" -B "$tsan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFIBER_BUILD_APPS=OFF \
  -DFIBER_BUILD_BENCHMARKS=OFF -DFIBER_BUILD_EXAMPLES=OFF "${launcher[@]}" \
  "-DCMAKE_CXX_FLAGS=$tsan" "-DCMAKE_EXE_LINKER_FLAGS=$tsan" "-DCMAKE_SHARED_LINKER_FLAGS=$tsan" \
  >/dev/null
cmake --build "$tsan_dir" -j "$(nproc)" --target fiber_unit_tests
tsan_log="$tsan_dir/sanitize.log"
tsan_status=0
TSAN_OPTIONS=second_deadlock_stack=1 GTEST_COLOR=no \
  ctest --test-dir "$tsan_dir" -V -L '^unit$' >"$tsan_log" 2>&1 || tsan_status=$?
grep -E "tests passed|tests failed" "$tsan_log" || true
if grep -q "WARNING: ThreadSanitizer" "$tsan_log" || [[ $tsan_status -ne 0 ]]; then
  grep -E -A30 "WARNING: ThreadSanitizer|\[  FAILED  \]" "$tsan_log" >&2 || cat "$tsan_log" >&2
  echo "sanitize.sh: ThreadSanitizer reported races, or the unit tests failed (above; all of it" \
    "in $tsan_log)" >&2
  exit 1
fi

build_dir=${BUILD_DIR:-$root/build-sanitize}
sanitizers="-fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFIBER_BUILD_APPS=OFF \
  -DFIBER_BUILD_BENCHMARKS=OFF -DFIBER_BUILD_EXAMPLES=OFF "${launcher[@]}" \
  "-DCMAKE_CXX_FLAGS=$sanitizers" "-DCMAKE_EXE_LINKER_FLAGS=$sanitizers" \
  "-DCMAKE_SHARED_LINKER_FLAGS=$sanitizers" >/dev/null
# The library, fiberrun, and the tests of the core (the slowest, worker_kill_test and the
# elasticity timings, run in the main suite).
core_tests=(pool_methods_test serialization_test errors_test lifecycle_test progress_test
            oversubscription_test node_array_test resilience_test broken_runtime_test
            scheduling_test worker_set_test)
cmake --build "$build_dir" -j "$(nproc)" --target fiberrun "${core_tests[@]}"
# Every process's report is in the verbose log (a task process's report would otherwise be
# contained like any crash, retried, and its test could still pass); UBSan's reports do not honour
# log_path when built with ASan, hence the log.
# handle_segv=0: a segfault (the resilience tests make real ones) ends the process by its signal,
# as without ASan, for the worker to see and report.
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export GTEST_COLOR=no
regex="^($(IFS='|'; echo "${core_tests[*]}"))\$"
log="$build_dir/sanitize.log"
status=0
ctest --test-dir "$build_dir" -V -R "$regex" "$@" >"$log" 2>&1 || status=$?
grep -E "^ *[0-9]+/[0-9]+ Test|tests passed" "$log" || true
if grep -qE "runtime error:|ERROR: AddressSanitizer" "$log"; then
  grep -E -A20 "runtime error:|ERROR: AddressSanitizer" "$log" >&2
  echo "sanitize.sh: the sanitizers reported errors (above; all of it in $log)" >&2
  exit 1
fi
if [[ $status -ne 0 ]]; then
  cat "$log" >&2
  echo "sanitize.sh: tests failed (log above, and in $log)" >&2
fi
exit "$status"
