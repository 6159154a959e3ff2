#!/usr/bin/env bash
# Whole-process cost of a pipesim command (docs/performance.md, "Start-up"): each binary run
# N times, the binaries interleaved run by run (paired: the same minutes of a shared machine),
# median wall time and median peak RSS of each. Wall time from bash's EPOCHREALTIME around
# /usr/bin/time (its %e has 10 ms steps; the figure includes starting /usr/bin/time itself),
# /usr/bin/time's own %e, and RSS from its %M (the whole process).
#
#   bench/startup.sh [-n N] BINARY... [-- ARGS...]     ARGS default: --version
#   bench/startup.sh -n 21 /tmp/old/pipesim build/tools/pipesim
set -euo pipefail
n=11
if [[ ${1:-} == -n ]]; then n=$2; shift 2; fi
bins=()
while [[ $# -gt 0 && $1 != -- ]]; do bins+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--version)
[[ ${#bins[@]} -gt 0 ]] || { echo "usage: $0 [-n N] BINARY... [-- ARGS...]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < n; i++)); do
  for b in "${!bins[@]}"; do
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %M" -o "$tmp/time" "${bins[$b]}" "${args[@]}" > /dev/null 2>&1 || true
    t1=$EPOCHREALTIME
    echo "$(( (${t1/./} - ${t0/./}) ))" >> "$tmp/wall.$b"  # microseconds
    read -r e rss < "$tmp/time"
    echo "$e" >> "$tmp/e.$b"
    echo "$rss" >> "$tmp/rss.$b"
  done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%-48s %10s %12s %10s %10s\n" "binary (${args[*]}, $n runs each)" "wall ms" "min wall ms" "time %e s" "RSS MiB"
for b in "${!bins[@]}"; do
  wall=$(median "$tmp/wall.$b"); min=$(sort -n "$tmp/wall.$b" | head -1); rss=$(median "$tmp/rss.$b")
  printf "%-48s %10.1f %12.1f %10.2f %10.1f\n" "${bins[$b]}" "$(echo "$wall / 1000" | bc -l)" \
         "$(echo "$min / 1000" | bc -l)" "$(median "$tmp/e.$b")" "$(echo "$rss / 1024" | bc -l)"
done
