#!/usr/bin/env bash
# The Fiber paper's benchmarks, replayed in one run against peers on this machine:
#   throughput   empty tasks: fiber, the raw MPI round trip to a spawned process (the floor),
#                multiprocessing.Pool, mpi4py.futures, IPyParallel
#   overhead     the paper's sleep test (5 workers, 1 s .. 100 us tasks, ideal 1 s): fiber, the
#                same sleeps looped in one process (the floor), the paper's rounds with no
#                framework (threads; plain MPI processes), and the same three peers
#   es_scaling   fiber-es on 4 simulated nodes, 1 .. 128 workers, population 2,048, P = 353 .. 167k:
#                the master's CPU, messages and bytes per generation, the pool's start-up CPU, and
#                the paper's ES workload projected from them to 4,096 workers
#   noise_memory PSS of the job with a shared noise table against a copy per worker
#   elasticity   growing (spawn, unpark), shrinking, recovering from crashes and lost workers
#   large_results 100 MB results with fiber's UCX transports (no CMA) against UCX_TLS=all
#
#   scripts/bench.sh            the full run (about 35 minutes on 2 cores; es_scaling 15-25 of them)
#   scripts/bench.sh --quick    fewer and shorter measurements (about 5 minutes)
#
# Installs what is missing (scripts/setup.sh --bench: the peers are Debian's python3-ipyparallel
# and python3-mpi4py, run with /usr/bin/python3), builds build/ (Release), and writes
# benchmarks/results/NAME.csv, NAME.md and NAME.png for each benchmark, and run.txt (when, which
# mode, the machine's load). A full run also rewrites the README's tables. If a program fails,
# the rows measured so far are still reported, and the script exits with status 1.
set -euo pipefail

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

quick=false
for arg in "$@"; do
  case "$arg" in
    --quick) quick=true ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh --bench
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release --log-level=WARNING
cmake --build build -j2 --target fiberrun fiber-es fiber_throughput mpi_roundtrip fiber_overhead \
  sleep_floor mpi_rounds noise_memory fiber_elasticity large_results fiber_mpi_counts \
  mpi_counts_check

# mpirun and MPI singletons refuse root without these (docs/platform.md, "Running as root").
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

python=/usr/bin/python3  # Debian's: the peers and matplotlib are installed for it
results=benchmarks/results
mkdir -p "$results"
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
SECONDS=0

# Runs one measuring program, its CSV lines appended to OUTPUT; a hang ends at the time limit.
#   measure NAME LIMIT OUTPUT COMMAND...
failed=()
measure() {
  local name="$1" limit="$2" output="$3"
  shift 3
  echo "== $name ($((SECONDS / 60))m$((SECONDS % 60))s)" >&2
  if ! timeout --kill-after=10 "$limit" "$@" >>"$output"; then
    echo "bench.sh: $name failed or timed out (limit ${limit}s)" >&2
    failed+=("$name")
  fi
}

# Starts NAME's CSV (a .tmp beside it until the benchmark is done) with its header.
begin_csv() { echo "$2" >"$results/$1.csv.tmp"; }
end_csv() { mv "$results/$1.csv.tmp" "$results/$1.csv"; }

# Writes NAME's Markdown and PNG with its report.py, and the README's table on a full run.
report() {
  local name="$1" script="$2"
  local readme=(--readme README.md)
  $quick && readme=()
  echo >&2
  $python "$script" "$results/$name.csv" --markdown "$results/$name.md" \
    --plot "$results/$name.png" "${readme[@]}" || failed+=("$name report")
}

if $quick; then
  quick_flag=(--quick)
  overhead=(--task-seconds 0.001 0.0001 --repeats 1)
  overhead_repeats=(--repeats 1)
  peer_limit=(--limit 1)
  es_scaling=(--workers 1 4 16 --also 4:1 --population 256 --generations 2)
  noise_memory=(--floats 4000000)
else
  quick_flag=()
  overhead=(--repeats 3)
  overhead_repeats=(--repeats 3)
  peer_limit=(--limit 5)
  es_scaling=(--workers 1 4 16 64 128 --also 64:2 --population 2048 --generations 3)
  noise_memory=(--floats 25000000)
fi

# --- throughput of empty tasks
begin_csv throughput "framework,mode,workers,chunksize,tasks,seconds,tasks_per_second"
out="$results/throughput.csv.tmp"
bin=build/benchmarks/throughput
measure mpi_roundtrip 120 "$out" "$bin/mpi_roundtrip"
measure fiber_throughput 900 "$out" "$bin/fiber_throughput" "${quick_flag[@]}"
for peer in multiprocessing mpi4py_futures ipyparallel; do
  measure "${peer}_throughput" 600 "$out" $python "benchmarks/throughput/${peer}_peer.py" \
    "${quick_flag[@]}"
done
end_csv throughput
report throughput benchmarks/throughput/report.py

# --- framework overhead (the paper's sleep test)
begin_csv overhead "framework,mode,task_seconds,tasks,workers,seconds,measured_tasks"
out="$results/overhead.csv.tmp"
measure sleep_floor 300 "$out" build/benchmarks/overhead/sleep_floor "${overhead[@]}"
measure mpi_rounds 300 "$out" build/benchmarks/overhead/mpi_rounds "${overhead[@]}"
measure fiber_overhead 600 "$out" build/benchmarks/overhead/fiber_overhead "${overhead[@]}"
# The same rounds with one worker: the cost of a round when the processes do not compete for cores.
measure "mpi_rounds 1 worker" 300 "$out" build/benchmarks/overhead/mpi_rounds \
  --workers 1 --task-seconds 0.001 0.0001 "${overhead_repeats[@]}"
measure "fiber_overhead 1 worker" 300 "$out" build/benchmarks/overhead/fiber_overhead \
  --workers 1 --modes apply_async --task-seconds 0.001 0.0001 "${overhead_repeats[@]}"
for peer in multiprocessing mpi4py_futures ipyparallel; do
  measure "${peer}_overhead" 600 "$out" $python "benchmarks/overhead/$peer/overhead.py" \
    "${overhead[@]}" "${peer_limit[@]}"
done
end_csv overhead
report overhead benchmarks/overhead/report.py

# --- ES scaling as CPU and bytes (its header comes from es_scaling.py --header), counted by the
# PMPI library, which is first checked against a known exchange
counts_check=$(mktemp)
if ! timeout 120 mpirun --oversubscribe -n 1 env \
  LD_PRELOAD="$root/build/benchmarks/mpi_counts/libfiber_mpi_counts.so" \
  FIBER_MPI_COUNTS="$counts_check" build/benchmarks/mpi_counts/mpi_counts_check >&2; then
  failed+=("mpi_counts_check")
fi
rm -f "$counts_check"
: >"$results/es_scaling.csv.tmp"
measure es_scaling 1500 "$results/es_scaling.csv.tmp" $python benchmarks/es_scaling/es_scaling.py \
  build --header "${es_scaling[@]}"
end_csv es_scaling
report es_scaling benchmarks/es_scaling/report.py

# --- noise-table memory: one run per configuration, so that no parked workers are counted
begin_csv noise_memory "table,workers,processes,pss_bytes,table_bytes"
for workers in 1 4 16; do
  for table in none shared private; do
    measure "noise_memory $table $workers" 120 "$results/noise_memory.csv.tmp" \
      build/benchmarks/noise_memory/noise_memory --workers "$workers" --table "$table" \
      "${noise_memory[@]}"
  done
done
end_csv noise_memory
report noise_memory benchmarks/noise_memory/report.py

# --- elasticity. Through fiberrun: it kills a worker process, which ends a plain mpirun's job.
begin_csv elasticity "measure,workers,seconds"
measure fiber_elasticity 300 "$results/elasticity.csv.tmp" build/libfiber/fiberrun -n 1 \
  build/benchmarks/elasticity/fiber_elasticity "${quick_flag[@]}"
end_csv elasticity
readme=(--readme README.md)
$quick && readme=()
$python benchmarks/elasticity/report.py "$results/elasticity.csv" \
  --markdown "$results/elasticity.md" "${readme[@]}" || failed+=("elasticity report")

# --- large results: fiber's default transports and CMA, alternated (docs/platform.md, "A worker
# killed mid-transfer")
begin_csv large_results "transports,isolation,workers,megabytes,results,seconds,megabytes_per_second"
for _ in 1 2 3; do
  for isolation in --in-worker ""; do
    for transports in "-u UCX_TLS" "UCX_TLS=all"; do
      measure "large_results $transports $isolation" 300 "$results/large_results.csv.tmp" \
        env $transports build/libfiber/fiberrun build/benchmarks/large_results/large_results \
        $isolation
    done
  done
done
end_csv large_results
$python benchmarks/large_results/report.py "$results/large_results.csv" \
  --markdown "$results/large_results.md" || failed+=("large_results report")

cat >"$results/run.txt" <<EOF
scripts/bench.sh $($quick && echo --quick || echo "(full run)")
started $started, took $((SECONDS / 60)) min $((SECONDS % 60)) s
commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo " (with local changes)")
load average (1, 5, 15 min) at the start: $load_before, at the end: $(cut -d' ' -f1-3 /proc/loadavg)
processors: $(nproc)
failed: ${failed[*]:-none}
EOF
echo >&2
cat "$results/run.txt" >&2

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench.sh: incomplete, failed: ${failed[*]}" >&2
  exit 1
fi
