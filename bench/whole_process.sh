#!/usr/bin/env bash
# Whole-process times, paired: runs each command of a round one after another, ROUNDS
# rounds, and prints each command's median wall time and its ratio to the first (the
# speed-of-light replay, ../shared/bench/replay.cpp built with g++ -O2 -std=c++20).
#
#   bench/whole_process.sh ROUNDS 'replay 128 2048' 'old/pipesim simulate ... --json' 'new/pipesim ...'
set -u
rounds=${1:?usage: whole_process.sh ROUNDS CMD...}; shift
declare -a times
for ((r = 0; r < rounds; ++r)); do
  for ((i = 0; i < $#; ++i)); do
    cmd=${*:i+1:1}
    t0=$(date +%s%N)
    bash -c "$cmd" >/dev/null 2>&1
    t1=$(date +%s%N)
    times[i]+="$(( (t1 - t0) / 1000 )) "
  done
done
base=""
for ((i = 0; i < $#; ++i)); do
  med=$(echo "${times[i]}" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
  [ -z "$base" ] && base=$med
  printf '%9.1f ms  x%5.2f  %s\n' "$(echo "$med / 1000" | bc -l)" "$(echo "$med / $base" | bc -l)" "${*:i+1:1}"
done
