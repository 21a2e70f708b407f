#!/usr/bin/env bash
# The throughput benchmark: empty tasks on fiber pools of 1, 2 and 4 workers, against the plain
# MPI round trip fiber is built on (the floor) and against Python's multiprocessing.Pool (the peer);
# then the elasticity benchmark (growing, shrinking, recovering from crashes and lost workers).
#
#   scripts/bench.sh            the full run (a few minutes)
#   scripts/bench.sh --quick    a tenth of the tasks per measurement (well under a minute)
#
# Builds build/ (Release), runs the three programs in one go and writes
#   benchmarks/results/throughput.csv   framework,mode,workers,chunksize,tasks,seconds,tasks_per_second
#   benchmarks/results/throughput.md    the table that it also prints
# If a program fails, the rows measured so far are still written and reported, and the script
# exits with status 1.
set -euo pipefail

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; }

quick=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release --log-level=WARNING
cmake --build build -j2 --target fiber_throughput mpi_roundtrip fiber_elasticity fiberrun

# mpirun and MPI singletons refuse root without these (PLATFORM.md fact 1).
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

results=benchmarks/results
csv="$results/throughput.csv"
partial="$csv.tmp"  # replaces the old results only once every program has run
mkdir -p "$results"
echo "framework,mode,workers,chunksize,tasks,seconds,tasks_per_second" >"$partial"

# Runs one measuring program, its CSV appended to OUTPUT; a hang ends at the time limit.
#   measure NAME LIMIT OUTPUT COMMAND...
failed=()
measure() {
  local name="$1" limit="$2" output="$3"
  shift 3
  echo "== $name" >&2
  if ! timeout --kill-after=10 "$limit" "$@" >>"$output"; then
    echo "bench.sh: $name failed or timed out (limit ${limit}s)" >&2
    failed+=("$name")
  fi
}

bin=build/benchmarks/throughput
measure mpi_roundtrip 120 "$partial" "$bin/mpi_roundtrip"
measure fiber_throughput 900 "$partial" "$bin/fiber_throughput" "${quick[@]}"
measure multiprocessing_peer 900 "$partial" /usr/bin/python3 \
  benchmarks/throughput/multiprocessing_peer.py "${quick[@]}"

# Growing, shrinking, crash and lost-worker recovery. Through fiberrun: it kills a worker
# process, which ends the job under a plain mpirun.
elasticity_csv="$results/elasticity.csv"
echo "measure,workers,seconds" >"$elasticity_csv.tmp"
measure fiber_elasticity 300 "$elasticity_csv.tmp" build/libfiber/fiberrun -n 1 \
  build/benchmarks/elasticity/fiber_elasticity "${quick[@]}"
mv "$elasticity_csv.tmp" "$elasticity_csv"

mv "$partial" "$csv"
echo >&2
readme=(--readme README.md)  # the README shows full runs only
[[ ${#quick[@]} -gt 0 ]] && readme=()
/usr/bin/python3 benchmarks/throughput/report.py "$csv" --markdown "$results/throughput.md" \
  "${readme[@]}"
/usr/bin/python3 benchmarks/elasticity/report.py "$elasticity_csv" \
  --markdown "$results/elasticity.md" "${readme[@]}"
echo "results: $csv, $results/throughput.md, $elasticity_csv, $results/elasticity.md" >&2

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench.sh: incomplete, failed: ${failed[*]}" >&2
  exit 1
fi
