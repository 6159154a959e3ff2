#!/usr/bin/env bash
# Installs what pipesim needs on Debian 12 (as root, or with sudo available) and builds it.
#   tools/bootstrap.sh [BUILD_DIR] [extra CMake arguments...]
# The build goes to BUILD_DIR (default: build). Safe to run again: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true

packages=(cmake ninja-build g++ pkg-config libboost-graph-dev nlohmann-json3-dev libeigen3-dev libcli11-dev
          zlib1g-dev  # gzip-compressed outputs (--trace t.json.gz)
          libjemalloc-dev  # the executable's allocator, on transparent huge pages (tools/allocator.cpp)
          libopenmpi-dev openmpi-bin  # mpirun -np N pipesim sweep (PIPESIM_MPI, docs/sweep.md#mpi)
          googletest libgtest-dev libgmock-dev libbenchmark-dev
          python3 python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest  # the Python module (python/)
          fortunes fortunes-min  # an English text corpus for `pipesim run --data fortunes` (docs/convergence.md)
          chromium)  # headless browser for tests/report_browser_test.cpp (skips without it)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$jobs"
