#!/usr/bin/env bash
# Installs the Debian packages fiber needs, or, when not root, names the missing ones.
#
#   scripts/setup.sh            packages to build, test and run fiber
#   scripts/setup.sh --bench    also the peers of the benchmarks (scripts/bench.sh)
#
# Both README commands (scripts/run.sh, scripts/test.sh) call this first. It is idempotent and
# quiet when everything is present. On a cluster login node (not root) it prints the apt-get line
# to hand to an administrator, or the environment modules to load instead, and fails.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config
  # MPI and messages (Open MPI 4.1 with UCX, Boost 1.74: the stack of docs/platform.md)
  openmpi-bin libopenmpi-dev libboost-mpi-dev libboost-serialization-dev
  # command line (and its TOML files), logging
  libcli11-dev libtomlplusplus-dev libspdlog-dev libfmt-dev
  # the applications: linear algebra, physics (and its sample models), HDF5 files
  libeigen3-dev libmujoco-dev libmujoco-samples libhdf5-dev hdf5-tools
  # libmujoco-dev's CMake package names /usr/include/libqhull_r without depending on it
  libqhull-dev
  # tests and micro-benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  # plots and HDF5 checks from Python (Debian's /usr/bin/python3)
  python3-h5py python3-matplotlib python3-numpy
  # simulated nodes for tests (unshare), the Python peer in the throughput benchmark
  util-linux python3
  # the Python package fiber (python/): its extension, functions by value, its tests (pytest and
  # CPython's own multiprocessing tests)
  pybind11-dev python3-dev python3-cloudpickle python3-pytest libpython3.11-testsuite
  # a one-machine Slurm cluster for the sbatch tests (slurm/local/)
  slurm-wlm munge
  # the C++ API reference from the public headers, and its test (docs/)
  doxygen
)

case "${1:-}" in
  "") ;;
  # the peers fiber is measured against, run with Debian's /usr/bin/python3
  --bench) packages+=(python3-ipyparallel python3-mpi4py python3-distributed) ;;
  *) echo "fiber setup: unknown option '$1' (--bench or nothing)" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "fiber setup: missing Debian packages: ${missing[*]}" >&2
  echo "fiber setup: install them with: sudo apt-get install -y ${missing[*]}" >&2
  echo "fiber setup: (on a cluster, load your site's Open MPI, Boost and CMake modules instead)" >&2
  exit 1
fi

echo "fiber setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "${missing[@]}" >/dev/null
echo "fiber setup: done"
