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
#   es_real      the paper's ES scaling run for real: fiber-es, 1,024 tasks of 0.92 s per generation,
#                on 32 .. 1,024 workers of simulated nodes (64 slots each, the master on a node of
#                its own): seconds per generation against the ideal and the paper's, the CPU of
#                each generation by process class, PSS per worker, and 10 workers SIGKILLed during
#                a generation of 1,024; IPyParallel and mpi4py.futures at 32 and 64 workers (about
#                40 minutes, 10 of them starting the 1,024 workers; 12 GB of memory at 1,024)
#   ppo_scaling  fiber-ppo on Humanoid-v5 with a simulated step cost, 1 .. 64 workers on 4 simulated
#                nodes and 8 on one: rollout and update per iteration, the update alone against the
#                GEMMs of its shapes, the paper's 256 against 8 workers projected from them; then
#                the paper's iteration (256 slots) run for real on 8 workers of one node, 64 and
#                256 on 8 simulated nodes, with the CPU of each phase by process from /proc
#   noise_memory PSS of the job with a shared noise table against a copy per worker
#   elasticity   growing (spawn, unpark), shrinking, recovering from crashes and lost workers;
#                stage changes between one-core and two-core workers on 16 simulated nodes
#   idle_workers what workers with nothing to do cost (held, running a long task, parked): CPU and
#                wake-ups per worker and the machine's busy share, 16 .. 128 workers on one
#                machine and on 4 simulated nodes, and the first call after an idle spell
#   startup      where a pool's start-up goes per worker, 128 and 256 workers on 4 simulated nodes
#                and 1,024 on 16 (about 10 minutes of it):
#                the CPU of the master, mpirun, the node daemons and each worker by phase, the
#                serial part against its 5 ms target, and each phase's moments
#   large_results 100 MB results with fiber's UCX transports (no CMA) against UCX_TLS=all
#   task_hop     where the default pool's per-task time goes between a worker and its task
#                process (kernel counters per task), beside the MPI round trip
#   queue_pipe   Queue items/s and Pipe round trips/s between two Processes, beside Python's
#                multiprocessing.Queue and Pipe
#   round_hops   where a round of the paper's overhead test spends its time: each chunk's hops
#                between the master, its worker and its task process (FIBER_HOP_TRACE)
#   python_pool  fiber's Python front end (import fiber as mp) against C++ fiber's rounds and the
#                Python peers (multiprocessing, mpi4py.futures, IPyParallel, Dask): sleep rounds,
#                empty tasks, pool start-up and reuse, a large numpy array
#
#   scripts/bench.sh            the full run (about 110 minutes on 2 cores; es_real about 40 of
#                               them, es_scaling 15-25, startup about 14, idle_workers about 12,
#                               ppo_scaling about 7)
#   scripts/bench.sh --quick    fewer and shorter measurements (about 5 minutes)
#   --only NAME[,NAME...]       these benchmarks only (the names above)
#   --results DIR               write there instead of benchmarks/results/ (and not the
#                               tables of docs/guide/benchmarks.md)
#   --build DIR                 use this build directory as it is (default: configure and build
#                               build/ as Release)
#   --hang-limit S              a peer that prints nothing for S seconds is hung (default 60,
#                               --quick 20: its peers print every second or so)
#
# Installs what is missing (scripts/setup.sh --bench: the peers are Debian's python3-ipyparallel,
# python3-mpi4py and python3-distributed, run with /usr/bin/python3), builds build/ (Release), and writes
# benchmarks/results/NAME.csv, NAME.md and NAME.png for each benchmark, and run.txt (when, which
# mode, the machine's load). A full run also rewrites the tables of docs/guide/benchmarks.md. Every program runs
# alone (benchmarks/contained_run.py): in a session of its own, within a time limit, every
# process it started stopped after it. A peer that hangs is stopped, shows in the tables as
# "hung (reason)" and is not run again; NAME_peers.csv says how each peer ended. If a program
# fails or hangs, the rest of the run goes on, the rows measured so far are still reported, and
# the script exits with status 1.
set -euo pipefail

usage() { sed -n '2,63p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bench.sh: $*" >&2; exit 2; }

benchmarks=(throughput overhead es_scaling es_real ppo_scaling noise_memory elasticity idle_workers
  startup large_results task_hop queue_pipe round_hops python_pool)
quick=false
only=()
results=benchmarks/results
build=""
hang_limit=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=true ;;
    --only | --results | --build | --hang-limit)
      [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
      case "$1" in
        --only) IFS=, read -ra only <<<"$2" ;;
        --results) results=$2 ;;
        --build) build=$2 ;;
        --hang-limit) hang_limit=$2 ;;
      esac
      shift
      ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
for name in "${only[@]}"; do
  [[ " ${benchmarks[*]} " == *" $name "* ]] || die "no benchmark '$name' (${benchmarks[*]})"
done
[[ ${#only[@]} -gt 0 ]] || only=("${benchmarks[@]}")
if [[ -n $hang_limit ]] && ! [[ $hang_limit =~ ^[0-9]+$ && $hang_limit -gt 0 ]]; then
  die "--hang-limit needs a positive number of seconds, not '$hang_limit'"
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/setup.sh --bench
if [[ -z $build ]]; then
  build=build
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release --log-level=WARNING
  cmake --build build -j2 --target fiberrun fiber-es fiber_throughput mpi_roundtrip \
    fiber_overhead sleep_floor mpi_rounds lane_rounds noise_memory fiber_elasticity \
    fiber_stage_change idle_workers fiber_startup \
    large_results \
    fiber_mpi_counts mpi_counts_check task_hop queue_pipe fiber-ppo ppo_update _fiber
fi
[[ -x $build/libfiber/fiberrun ]] || die "$build is not a built build directory"
build=$(cd "$build" && pwd)

# mpirun and MPI singletons refuse root without these (docs/platform.md, "Running as root").
if [[ $(id -u) -eq 0 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# What marks this run's processes (benchmarks/contained_run.py); a caller may choose it.
export FIBER_BENCH_RUN=${FIBER_BENCH_RUN:-bench-$$-$(date +%s)}

python=/usr/bin/python3  # Debian's: the peers and matplotlib are installed for it
mkdir -p "$results"
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
SECONDS=0

# Runs one measuring program contained (benchmarks/contained_run.py), its CSV lines appended to
# OUTPUT, ended at LIMIT seconds; its exit status in contained (0 ok, 3 hung, else failed).
#   contain NAME LIMIT OUTPUT [contained_run.py OPTION...] -- COMMAND...
# contained_run.py runs in the background so that bench.sh can pass on SIGINT and SIGTERM to it
# (it stops its program's processes, which are in a session of their own, before it ends).
failed=()
contained=0
running=""
stop_running() {
  if [[ -n $running ]]; then
    kill -TERM "$running" 2>/dev/null || true
    wait "$running" || true
  fi
  echo "bench.sh: interrupted" >&2
  exit 130
}
trap stop_running INT TERM
contain() {
  local name="$1" limit="$2" output="$3"
  shift 3
  echo "== $name ($((SECONDS / 60))m$((SECONDS % 60))s)" >&2
  contained=0
  $python benchmarks/contained_run.py --name "$name" --limit "$limit" --output "$output" "$@" &
  running=$!
  wait "$running" || contained=$?
  running=""
  if [[ $contained -ne 0 ]]; then
    echo "bench.sh: $name failed or hung" >&2
    failed+=("$name")
  fi
}
#   measure NAME LIMIT OUTPUT COMMAND...
measure() {
  local name="$1" limit="$2" output="$3"
  shift 3
  contain "$name" "$limit" "$output" -- "$@"
}
# A peer: hung after --hang-limit seconds without output, its end recorded in BENCHMARK_peers.csv.
# A peer that hung is not run again (a hang costs the run one --hang-limit).
#   measure_peer BENCHMARK FRAMEWORK COMMAND...
hung_peers=()  # "framework:benchmark"
measure_peer() {
  local benchmark="$1" framework="$2" hung=() earlier
  shift 2
  for earlier in "${hung_peers[@]}"; do
    if [[ ${earlier%%:*} == "$framework" ]]; then
      hung=(--hung-earlier "${earlier#*:}")
    fi
  done
  contain "${framework}_$benchmark" "$peer_limit" "$results/$benchmark.csv.tmp" \
    --silence "$hang_limit" --states "$results/${benchmark}_peers.csv.tmp" \
    --framework "$framework" "${hung[@]}" -- "$@"
  if [[ $contained -eq 3 && ${#hung[@]} -eq 0 ]]; then
    hung_peers+=("$framework:$benchmark")
  fi
}

# Starts NAME's CSV (a .tmp beside it until the benchmark is done) with its header.
begin_csv() {
  echo "$2" >"$results/$1.csv.tmp"
  rm -f "$results/${1}_peers.csv.tmp"
}
end_csv() {
  mv "$results/$1.csv.tmp" "$results/$1.csv"
  if [[ -e $results/${1}_peers.csv.tmp ]]; then
    mv "$results/${1}_peers.csv.tmp" "$results/${1}_peers.csv"
  else
    rm -f "$results/${1}_peers.csv"
  fi
}

# The tables of docs/guide/benchmarks.md: full runs into benchmarks/results/ only.
page=(--page docs/guide/benchmarks.md)
if $quick || [[ $results != benchmarks/results ]]; then
  page=()
fi

# Writes NAME's Markdown and PNG with its report.py (with its peers' ends, if it has peers), and
# its table in docs/guide/benchmarks.md.
report() {
  local name="$1" script="$2"
  local states=()
  [[ -e $results/${name}_peers.csv ]] && states=(--peer-states "$results/${name}_peers.csv")
  echo >&2
  $python "$script" "$results/$name.csv" --markdown "$results/$name.md" \
    --plot "$results/$name.png" "${states[@]}" "${page[@]}" || failed+=("$name report")
}

if $quick; then
  quick_flag=(--quick)
  overhead=(--total 0.2 --task-seconds 0.001 0.0001 --repeats 1)
  overhead_repeats=(--total 0.2 --repeats 1)
  peer_time=(--limit 1)
  peer_limit=90
  hang_limit=${hang_limit:-20}  # a hang within --quick's 3 minutes
  es_scaling=(--workers 1 4 16 --also 4:1 --population 256 --generations 2)
  es_real=(--workers 128 --generations 3)
  es_real_peers=()  # none: a generation of 32 workers alone takes 30 s
  idle_workers=(--workers 16 --seconds 3)
  startup=(--workers 16)
  stage_change=(--nodes 4 --changes 3)
  ppo_scaling=(--workers 1 4 16 --iterations 2 --project-to 64 --replay 64 --replay-nodes 4)
  noise_memory=(--floats 4000000)
  noise_workers=(1 4)
  large_results_passes=1
  large_results=(--results 4)  # of 100 MB each: the quick run's 3 minutes hold a hung peer too
  task_hop=(--tasks 20000 --runs 1)
  queue_pipe=(--items 50000 --round-trips 5000 --runs 1)
  round_hops=(--total 0.1)
  python_rounds=(--total 0.2 --task-seconds 0.001 0.0001 --repeats 1)
  python_pool=(--quick)
else
  quick_flag=()
  overhead=(--repeats 3)
  overhead_repeats=(--repeats 3)
  peer_time=(--limit 5)
  peer_limit=600
  hang_limit=${hang_limit:-60}
  es_scaling=(--workers 1 4 16 64 128 --also 64:2 --population 2048 --generations 3)
  es_real=(--workers 32 64 128 256 512 1024 --generations 4 --fault 1024)
  es_real_peers=(--workers 32 64 --generations 3)
  idle_workers=(--workers 16 64 128 --seconds 10)
  startup=(--workers 128 256)
  stage_change=(--nodes 16 --changes 10)
  ppo_scaling=(--workers 1 2 4 8 16 32 64 --iterations 3 --project-to 256 --replay 64 256
    --replay-nodes 8)
  noise_memory=(--floats 25000000)
  noise_workers=(1 4 16)
  large_results_passes=3
  large_results=()
  task_hop=(--tasks 100000 --runs 3 --syscalls)
  queue_pipe=(--runs 3)
  round_hops=(--total 0.5)
  python_rounds=(--task-seconds 1 0.01 0.001 0.0001 --repeats 3)
  python_pool=()
fi
peers=("multiprocessing multiprocessing" "mpi4py.futures mpi4py_futures"
  "ipyparallel ipyparallel")  # framework (as in the CSV), script name

# Empty tasks.
bench_throughput() {
  begin_csv throughput "framework,mode,workers,chunksize,tasks,seconds,tasks_per_second"
  local out="$results/throughput.csv.tmp" bin="$build/benchmarks/throughput"
  local peer framework script
  measure mpi_roundtrip 120 "$out" "$bin/mpi_roundtrip"
  measure fiber_throughput 900 "$out" "$bin/fiber_throughput" "${quick_flag[@]}"
  for peer in "${peers[@]}"; do
    read -r framework script <<<"$peer"
    measure_peer throughput "$framework" $python "benchmarks/throughput/${script}_peer.py" \
      "${quick_flag[@]}"
  done
  end_csv throughput
  report throughput benchmarks/throughput/report.py
}

# The framework overhead (the paper's sleep test).
bench_overhead() {
  begin_csv overhead "framework,mode,task_seconds,tasks,workers,seconds,measured_tasks"
  local out="$results/overhead.csv.tmp" bin="$build/benchmarks/overhead"
  local peer framework script
  measure sleep_floor 300 "$out" "$bin/sleep_floor" "${overhead[@]}"
  measure mpi_rounds 300 "$out" "$bin/mpi_rounds" "${overhead[@]}"
  measure lane_rounds 300 "$out" "$bin/lane_rounds" "${overhead[@]}"
  measure fiber_overhead 600 "$out" "$bin/fiber_overhead" "${overhead[@]}"
  # The same rounds with one worker: the cost of a round when the processes do not compete for
  # cores.
  measure "mpi_rounds 1 worker" 300 "$out" "$bin/mpi_rounds" \
    --workers 1 --task-seconds 0.001 0.0001 "${overhead_repeats[@]}"
  measure "fiber_overhead 1 worker" 300 "$out" "$bin/fiber_overhead" \
    --workers 1 --modes apply_async --task-seconds 0.001 0.0001 "${overhead_repeats[@]}"
  for peer in "${peers[@]}"; do
    read -r framework script <<<"$peer"
    measure_peer overhead "$framework" $python "benchmarks/overhead/$script/overhead.py" \
      "${overhead[@]}" "${peer_time[@]}"
  done
  end_csv overhead
  report overhead benchmarks/overhead/report.py
}

# ES scaling as CPU and bytes (its header comes from es_scaling.py --header), counted by the
# PMPI library, which is first checked against a known exchange.
bench_es_scaling() {
  local counts_check
  counts_check=$(mktemp)
  measure mpi_counts_check 120 /dev/stderr mpirun --oversubscribe -n 1 env \
    LD_PRELOAD="$build/benchmarks/mpi_counts/libfiber_mpi_counts.so" \
    FIBER_MPI_COUNTS="$counts_check" "$build/benchmarks/mpi_counts/mpi_counts_check"
  rm -f "$counts_check"
  : >"$results/es_scaling.csv.tmp"
  measure es_scaling 1500 "$results/es_scaling.csv.tmp" $python \
    benchmarks/es_scaling/es_scaling.py "$build" --header "${es_scaling[@]}"
  end_csv es_scaling
  report es_scaling benchmarks/es_scaling/report.py
}

# ES scaling run for real (its header comes from es_real.py --header): the master's idle polls
# through the same PMPI library, checked by bench_es_scaling's mpi_counts_check.
# The peers run the same generation on one node, at the counts es_real_peers gives (a full run
# only).
bench_es_real() {
  local framework
  : >"$results/es_real.csv.tmp"
  rm -f "$results/es_real_peers.csv.tmp"
  measure es_real 4800 "$results/es_real.csv.tmp" $python benchmarks/es_real/es_real.py "$build" \
    --header "${es_real[@]}"
  for framework in mpi4py.futures ipyparallel; do
    [[ ${#es_real_peers[@]} -gt 0 ]] || break
    measure_peer es_real "$framework" $python benchmarks/es_real/peer.py --framework "$framework" \
      "${es_real_peers[@]}"
  done
  end_csv es_real
  report es_real benchmarks/es_real/report.py
}

# PPO scaling (its header comes from ppo_scaling.py --header).
bench_ppo_scaling() {
  : >"$results/ppo_scaling.csv.tmp"
  measure ppo_scaling 1800 "$results/ppo_scaling.csv.tmp" $python \
    benchmarks/ppo_scaling/ppo_scaling.py "$build" --header "${ppo_scaling[@]}"
  end_csv ppo_scaling
  report ppo_scaling benchmarks/ppo_scaling/report.py
}

# Noise-table memory: one run per configuration, so that no parked workers are counted.
bench_noise_memory() {
  local workers table
  begin_csv noise_memory "table,workers,processes,pss_bytes,table_bytes"
  for workers in "${noise_workers[@]}"; do
    for table in none shared private; do
      measure "noise_memory $table $workers" 120 "$results/noise_memory.csv.tmp" \
        "$build/benchmarks/noise_memory/noise_memory" --workers "$workers" --table "$table" \
        "${noise_memory[@]}"
    done
  done
  end_csv noise_memory
  report noise_memory benchmarks/noise_memory/report.py
}

# Elasticity. Through fiberrun: it kills a worker process, which ends a plain mpirun's job.
bench_elasticity() {
  begin_csv elasticity "measure,workers,seconds"
  measure fiber_elasticity 300 "$results/elasticity.csv.tmp" "$build/libfiber/fiberrun" -n 1 \
    "$build/benchmarks/elasticity/fiber_elasticity" "${quick_flag[@]}"
  # Stage changes within an allocation of simulated nodes (stage_change.py).
  measure "fiber_stage_change" 600 "$results/elasticity.csv.tmp" $python \
    benchmarks/elasticity/stage_change.py "$build" "${stage_change[@]}"
  end_csv elasticity
  $python benchmarks/elasticity/report.py "$results/elasticity.csv" \
    --markdown "$results/elasticity.md" "${page[@]}" || failed+=("elasticity report")
}

# Idle workers: on one machine (every worker on the master's host), then on 4 simulated nodes
# (one run per size there: idle_workers.py).
bench_idle_workers() {
  begin_csv idle_workers "nodes,workers,where,state,measure,value"
  measure "idle_workers one machine" 900 "$results/idle_workers.csv.tmp" \
    "$build/libfiber/fiberrun" -n 1 "$build/benchmarks/idle_workers/idle_workers" \
    "${idle_workers[@]}"
  measure "idle_workers simulated nodes" 1200 "$results/idle_workers.csv.tmp" $python \
    benchmarks/idle_workers/idle_workers.py "$build" --nodes 4 "${idle_workers[@]}"
  end_csv idle_workers
  $python benchmarks/idle_workers/report.py "$results/idle_workers.csv" \
    --markdown "$results/idle_workers.md" "${page[@]}" || failed+=("idle_workers report")
}

# Where a pool's start-up goes, per worker, on 4 simulated nodes (benchmarks/startup/).
bench_startup() {
  begin_csv startup "workers,nodes,measure,value"
  measure startup 900 "$results/startup.csv.tmp" $python benchmarks/startup/startup.py "$build" \
    --nodes 4 "${startup[@]}"
  if ! $quick; then
    measure "startup 1,024" 1800 "$results/startup.csv.tmp" $python \
      benchmarks/startup/startup.py "$build" --nodes 16 --workers 1024
  fi
  end_csv startup
  $python benchmarks/startup/report.py "$results/startup.csv" \
    --markdown "$results/startup.md" "${page[@]}" || failed+=("startup report")
}

# Large results: fiber's default transports and CMA, alternated (docs/platform.md, "A worker
# killed mid-transfer").
bench_large_results() {
  local isolation transports pass
  begin_csv large_results \
    "transports,isolation,workers,megabytes,results,seconds,megabytes_per_second"
  for ((pass = 0; pass < large_results_passes; pass++)); do
    for isolation in --in-worker ""; do
      for transports in "-u UCX_TLS" "UCX_TLS=all"; do
        # shellcheck disable=SC2086  # $transports is env's arguments, $isolation one flag or none
        measure "large_results $transports $isolation" 300 "$results/large_results.csv.tmp" \
          env $transports "$build/libfiber/fiberrun" \
          "$build/benchmarks/large_results/large_results" $isolation "${large_results[@]}"
      done
    done
  done
  end_csv large_results
  $python benchmarks/large_results/report.py "$results/large_results.csv" \
    --markdown "$results/large_results.md" || failed+=("large_results report")
}

# The hop between a worker and its task process: its table only (benchmarks/task_hop/).
bench_task_hop() {
  printf '# The hop between a worker and its task process\n\n' >"$results/task_hop.md"
  measure task_hop 300 "$results/task_hop.md" $python benchmarks/task_hop/task_hop.py "$build" \
    --csv "$results/task_hop.csv" "${task_hop[@]}"
}

# Queue and Pipe between two Processes, beside Python's: its table only (benchmarks/queue_pipe/).
bench_queue_pipe() {
  printf '# Queue and Pipe between two processes\n\n' >"$results/queue_pipe.md"
  measure queue_pipe 300 "$results/queue_pipe.md" $python benchmarks/queue_pipe/queue_pipe.py \
    "$build" --csv "$results/queue_pipe.csv" "${queue_pipe[@]}"
}

# Where a round of the overhead test spends its time: its table only (benchmarks/overhead/).
bench_round_hops() {
  printf '# Where a round of the overhead test spends its time\n\n' >"$results/round_hops.md"
  measure round_hops 300 "$results/round_hops.md" $python benchmarks/overhead/round_hops.py \
    "$build" --csv "$results/round_hops.csv" "${round_hops[@]}"
}

# The Python front end: its rounds beside C++ fiber's (fiber_overhead's default pool) and the
# floor in the same run, then each Python peer through the same script (benchmarks/python_pool/).
bench_python_pool() {
  begin_csv python_pool "framework,mode,task_seconds,tasks,workers,seconds,measured_tasks"
  local out="$results/python_pool.csv.tmp" bin="$build/benchmarks/overhead" module
  local script=benchmarks/python_pool/pool_bench.py
  measure sleep_floor 300 "$out" "$bin/sleep_floor" "${python_rounds[@]}"
  measure fiber_overhead 600 "$out" "$bin/fiber_overhead" --modes apply_async "${python_rounds[@]}"
  measure "fiber (Python)" 600 "$out" env PYTHONPATH="$build/python" $python "$script" \
    --module fiber "${python_rounds[@]}" "${python_pool[@]}"
  for module in multiprocessing mpi4py.futures ipyparallel dask; do
    measure_peer python_pool "$module" $python "$script" --module "$module" \
      "${python_rounds[@]}" "${python_pool[@]}" "${peer_time[@]}"
  done
  end_csv python_pool
  report python_pool benchmarks/python_pool/report.py
}

for name in "${only[@]}"; do
  "bench_$name"
done

cat >"$results/run.txt" <<EOF
scripts/bench.sh $($quick && echo --quick || echo "(full run)") (${only[*]})
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
