#!/usr/bin/env bash
# A one-machine Slurm cluster for trying the sbatch templates and for the tests: munged (its own
# key and socket), slurmctld and slurmd (node "localhost", this machine's CPUs and memory).
#
#   slurm/local/start.sh              # starts what is not running; waits until the node is idle
#   export SLURM_CONF=/tmp/fiber-slurm/slurm.conf      # as start.sh prints; then sbatch, squeue
#   slurm/local/stop.sh               # cancels the jobs, stops exactly what start.sh started
#
# Environment: FIBER_SLURM_DIR (default /tmp/fiber-slurm) holds the configuration, state, logs
# and pid files; FIBER_SLURM_PORT (default 6817) is slurmctld's port, slurmd takes the next one.
# Needs root (the daemons run as root, munged as the munge user) and Debian's slurm-wlm and
# munge packages (scripts/setup.sh). Idempotent: a second start only checks that all is up.
set -euo pipefail
dir=${FIBER_SLURM_DIR:-/tmp/fiber-slurm}
port=${FIBER_SLURM_PORT:-6817}
conf=$dir/slurm.conf
export SLURM_CONF=$conf

die() {
  echo "slurm/local/start.sh: $*" >&2
  exit 1
}
running() {  # running PIDFILE NAME: its process is alive and is NAME (not a reused pid)
  local pid
  pid=$(cat "$1" 2>/dev/null) && [[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]]
}

[[ $(id -u) -eq 0 ]] || die "needs root (slurmd and slurmctld run as root here)"
for program in munged slurmctld slurmd sinfo; do
  command -v "$program" >/dev/null || die "$program not found: install slurm-wlm and munge (scripts/setup.sh)"
done
[[ $port =~ ^[0-9]+$ ]] || die "FIBER_SLURM_PORT must be a port number, not '$port'"
[[ ${#dir} -le 80 ]] || die "FIBER_SLURM_DIR is too long for munge's socket path: $dir"

# A fresh cluster starts from empty state; a running one is left as it is.
munged_pid=$dir/munge/munged.pid
if ! running "$dir/slurmctld.pid" slurmctld && ! running "$dir/slurmd.pid" slurmd &&
  ! running "$munged_pid" munged; then
  rm -rf "$dir/state" "$dir/spool" "$dir/munge" "$dir"/*.log "$dir"/*.pid
fi
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"

# munged, with a key of its own: the system's munged (if any) is left alone.
if ! running "$munged_pid" munged; then
  chown munge:munge "$dir/munge"
  chmod 0711 "$dir/munge"  # munged: the socket's folder must be searchable by all
  [[ -s $dir/munge/munge.key ]] ||
    runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key"
  runuser -u munge -- munged --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$munged_pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
    die "munged did not start: $(tail -3 "$dir/munge/munged.log" 2>/dev/null)"
fi
munge --socket="$dir/munge/munge.socket" -n | unmunge --socket="$dir/munge/munge.socket" \
  >/dev/null || die "munge does not answer on $dir/munge/munge.socket"

# The configuration of docs/platform.md, "A Slurm cluster on one machine", with this machine's
# size and our paths.
cpus=$(nproc)
memory_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 9 / 10240))
cat >"$conf.tmp" <<EOF
# Written by slurm/local/start.sh: a one-machine cluster (no systemd, no cgroups).
ClusterName=fiber-local
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: also how long a requeued job waits before it may start again (default 120 s)
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=10
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
KillWait=10
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
if [[ -f $conf ]] && cmp -s "$conf" "$conf.tmp"; then
  rm "$conf.tmp"
else
  mv "$conf.tmp" "$conf"
fi

# The daemons fork into the background and write their pid files.
running "$dir/slurmctld.pid" slurmctld || slurmctld -i -f "$conf"
running "$dir/slurmd.pid" slurmd || slurmd -f "$conf" -N localhost

for _ in $(seq 300); do
  state=$(sinfo -h -N -o %T 2>/dev/null || true)
  [[ $state == idle || $state == mixed || $state == allocated ]] && break
  sleep 0.1
done
if [[ $state != idle && $state != mixed && $state != allocated ]]; then
  echo "slurm/local/start.sh: the node is not up after 30 s (state '${state:-none}'); logs:" >&2
  tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  exit 1
fi
echo "slurm/local: node localhost $state ($cpus CPUs); use it with: export SLURM_CONF=$conf"
