#!/usr/bin/env bash
# What distribution costs, paired: one process of 2 threads against `mpirun -np 2` of one
# thread each, the same binary, on the sweep grid of bench/sweep_paired.sh (4560 combinations,
# 3501 evaluated), rounds alternating which goes first. Prints the median evaluation time of
# each (the sweep's stderr line), the median of the per-round ratios (2 ranks' rate / 2
# threads' rate) and the load average before and after.
#   bench/sweep_ranks_paired.sh PIPESIM [ROUNDS=7] [extra sweep flags]
set -euo pipefail
bin=$1 rounds=${2:-7}
shift $(( $# < 2 ? $# : 2 ))
grid=(sweep --model gpt3-6.7b --gpus 32 --schedules all --pp 2,4,8,16 --microbatches 8..128
      --micro-batch-size 1,2,4 --tp 1,2,4,8 "$@")
mpirun=(mpirun -q -np 2 --oversubscribe)
[[ $(id -u) == 0 ]] && mpirun+=(--allow-run-as-root)
threads=() ranks=() ratios=()
evaluation() {  # the sweep's own seconds, from its stderr line
  sed -nE 's/^sweep: .* in ([0-9.]+) s on .*/\1/p' <<<"$1"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < rounds; ++r)); do
  if ((r % 2)); then
    b=$(evaluation "$("${mpirun[@]}" "$bin" "${grid[@]}" --jobs 1 2>&1 >/dev/null)")
    a=$(evaluation "$("$bin" "${grid[@]}" --jobs 2 2>&1 >/dev/null)")
  else
    a=$(evaluation "$("$bin" "${grid[@]}" --jobs 2 2>&1 >/dev/null)")
    b=$(evaluation "$("${mpirun[@]}" "$bin" "${grid[@]}" --jobs 1 2>&1 >/dev/null)")
  fi
  threads+=("$a") ranks+=("$b") ratios+=("$(echo "$a / $b" | bc -l)")
  printf "round %d: 1 rank x 2 threads %.3f s, 2 ranks x 1 thread %.3f s, ratio %.3f\n" $((r + 1)) "$a" "$b" "${ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
printf "median: 1 rank x 2 threads %.3f s, 2 ranks x 1 thread %.3f s, paired ratio (2 ranks' rate / 2 threads') %.1f %%\n" \
  "$(median "${threads[@]}")" "$(median "${ranks[@]}")" "$(echo "100 * $(median "${ratios[@]}")" | bc -l)"
