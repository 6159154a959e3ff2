#!/usr/bin/env bash
# Two pipesim binaries on docs/sweep.md's grid, paired: each round runs both, alternating
# which goes first, so a busy moment of a shared machine lands on both alike. Prints each
# one's median evaluation time (the sweep's own stderr line: in-process, set-up and output
# left out) and whole-process wall time, and the evaluated configurations per second.
#   bench/sweep_paired.sh OLD/pipesim NEW/pipesim [ROUNDS=7] [extra sweep flags, e.g. --jobs 1]
set -euo pipefail
old=$1 new=$2 rounds=${3:-7}
shift $(( $# < 3 ? $# : 3 ))
grid=(sweep --model gpt3-6.7b --gpus 32 --schedules all --pp 2,4,8,16 --microbatches 8..128
      --micro-batch-size 1,2,4 --tp 1,2,4,8 "$@")
declare -A eval_s wall_s
evaluated=0
once() {  # binary label
  local start end line
  start=$(date +%s.%N)
  line=$("$1" "${grid[@]}" 2>&1 >/dev/null | grep '^sweep: ')
  end=$(date +%s.%N)
  evaluated=$(sed -E 's/.*\(([0-9]+) evaluated.*/\1/' <<<"$line")
  eval_s[$2]+="$(sed -E 's/.* in ([0-9.]+) s on .*/\1/' <<<"$line") "
  wall_s[$2]+="$(echo "$end - $start" | bc) "
}
for ((r = 0; r < rounds; ++r)); do
  if ((r % 2)); then once "$new" new; once "$old" old; else once "$old" old; once "$new" new; fi
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $evaluated configurations evaluated; $rounds rounds"
printf "%-4s  %14s  %12s  %22s  %22s\n" "" "evaluation (s)" "process (s)" "configurations/s (in)" "configurations/s (proc)"
for b in old new; do
  e=$(median "${eval_s[$b]}") w=$(median "${wall_s[$b]}")
  printf "%-4s  %14.3f  %12.3f  %22.0f  %22.0f\n" "$b" "$e" "$w" "$(echo "$evaluated / $e" | bc -l)" "$(echo "$evaluated / $w" | bc -l)"
done
