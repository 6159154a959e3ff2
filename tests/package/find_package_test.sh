#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds tests/package/consumer against
# it with find_package(pipesim); runs the consumer (it checks a makespan).
#   find_package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -f "$tmp/prefix/lib/cmake/pipesim/pipesimConfig.cmake"
test -f "$tmp/prefix/lib/cmake/pipesim/pipesimConfigVersion.cmake"
test -f "$tmp/prefix/include/pipesim/sim/engine.hpp"
"$tmp/prefix/bin/pipesim" --version
cmake -S "$src/tests/package/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tmp/consumer" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
"$tmp/consumer/consumer"
# A version the package is not compatible with is refused, naming the version it has.
if cmake -S "$src/tests/package/consumer" -B "$tmp/newer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
         -DPIPESIM_WANT_VERSION=9.9 > "$tmp/newer.log" 2>&1; then
  echo "find_package(pipesim 9.9) should have failed"; exit 1
fi
grep -q "pipesimConfig.cmake, version: " "$tmp/newer.log" || { cat "$tmp/newer.log"; exit 1; }
echo "find_package(pipesim): ok"
