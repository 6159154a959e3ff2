#!/usr/bin/env bash
# Builds tests/package/consumer with pipesim as a subdirectory (add_subdirectory, as with
# fmt): pipesim's tests, benchmarks, Python module and CUDA stay off, only the consumer and
# the library it links are built.
#   add_subdirectory_test.sh SOURCE_DIR [CMake arguments...]
set -euo pipefail
src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Unoptimized (-O0, no debug information): what this tests is the packaging, and the 41 steps
# of pipesim::schedules and pipesim::core take 61 s of compile instead of 89 at -O3 (32 s of
# wall time instead of 45 on 2 cores, 2026-12-05).
cmake -S "$src/tests/package/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
      -DPIPESIM_SOURCE_DIR="$src" -DPIPESIM_CUDA=OFF "$@" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
if grep -q "Python module for" "$tmp/configure.log"; then
  echo "add_subdirectory: the Python module should be off in a subproject"; exit 1
fi
cmake --build "$tmp/consumer" --target consumer -j 2 > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/consumer/consumer"
echo "add_subdirectory(pipesim): ok"
