#!/usr/bin/env bash
# Runs one case of spawn_resources_test under fiberrun with the limit it is about, and checks that
# the job ends by itself with status 0 and leaves no process behind (before, MPI_Comm_spawn never
# returned and mpirun outlived the job):
#   tests/spawn_resources.sh FIBERRUN PROGRAM descriptors|shm
# descriptors: `ulimit -n 64`; shm: a /dev/shm of its own of kShmMiB, in a mount namespace of the
# run's own (root only; skipped with status 77 otherwise).
set -uo pipefail
fiberrun=$1 program=$(realpath "$2") case=$3
# shellcheck source=support/no_job_left.sh
source "$(dirname "$0")/support/no_job_left.sh"
readonly kShmMiB=64
# (A hang must fail the check rather than CTest's timeout, so that the cleanup below runs.)
readonly kRunLimit=150s
status=0
case $case in
  descriptors)
    (ulimit -n 64 && exec timeout -k 10 "$kRunLimit" "$fiberrun" -n 1 "$program" \
      --gtest_filter=SpawnResources.TooFewFileDescriptorsIsASpawnError) || status=$?
    ;;
  shm)
    if [[ $(id -u) -ne 0 ]]; then
      echo "spawn_resources: shm: needs root (a mount namespace with a small /dev/shm); skipped"
      exit 77
    fi
    # shellcheck disable=SC2016 # expanded by the inner shell
    timeout -k 10 "$kRunLimit" unshare --mount --propagation private /bin/sh -c \
      'mount -t tmpfs -o size="$0"m tmpfs /dev/shm && exec "$1" -n 1 "$2" "$3"' "$kShmMiB" \
      "$fiberrun" "$program" --gtest_filter=SpawnResources.FullDevShmIsASpawnError || status=$?
    ;;
  *)
    echo "spawn_resources: unknown case '$case'" >&2
    exit 2
    ;;
esac
expect_no_job_left "spawn_resources: $case" "$program"
if [[ $status -ne 0 ]]; then
  echo "spawn_resources: $case: the job ended with status $status (0 expected)" >&2
  exit 1
fi
