#!/usr/bin/env bash
# Differential check of the CLI's outputs: runs one pipesim binary over a fixed set of
# generators, sizes and cost settings and writes every output (stdout of simulate --json,
# the tables, schedule in each format, compare, and the Chrome traces) into a folder, so
# that two builds can be compared byte for byte:
#
#   bench/differential.sh OLD/pipesim /tmp/before
#   bench/differential.sh NEW/pipesim /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
#
# Each case's exit code is kept beside its output, so that errors must match too.
set -u
bin=${1:?usage: differential.sh PIPESIM OUTDIR}
out=${2:?usage: differential.sh PIPESIM OUTDIR}
mkdir -p "$out"
bin=$(realpath "$bin")
cd "$out" || exit 2  # traces are named relative to it, so that stdout does not name the folder
n=0
run() {  # run NAME ARGS...: stdout, stderr and exit code of one command
  local name=$1; shift
  "$bin" "$@" >"$name.out" 2>"$name.err"
  echo $? >"$name.rc"
  n=$((n + 1))
}
gens="gpipe 1f1b interleaved zb-h1 zb-h2 chimera pipedream pipedream-2bw async-1f1b amp amdp dualpipe dualpipev looped-bfs interleaved-zb zb-v v-half v-min"
sizes="2:4 4:8 8:32 16:64"
costs=("" "--link-latency 100ns --link-bandwidth 10GB/s --activation-bytes 1MB" "--optimizer-time 3us --grad-bytes 64MB --iterations 2 --link-bandwidth 100GB/s")
for g in $gens; do
  for ps in $sizes; do
    p=${ps%:*}; m=${ps#*:}
    for c in 0 1 2; do
      # shellcheck disable=SC2086
      run "sim-$g-p$p-m$m-c$c-json" simulate --schedule "$g" -p "$p" -m "$m" ${costs[$c]} --json
      # shellcheck disable=SC2086
      run "sim-$g-p$p-m$m-c$c-text" simulate --schedule "$g" -p "$p" -m "$m" ${costs[$c]} --breakdown
    done
    run "sim-$g-p$p-m$m-it2-json" simulate --schedule "$g" -p "$p" -m "$m" --iterations 2 --json
    run "sim-$g-p$p-m$m-trace" simulate --schedule "$g" -p "$p" -m "$m" --link-latency 50ns --trace "trace-$g-p$p-m$m.json"
    for f in text csv json; do run "sched-$g-p$p-m$m-$f" schedule --schedule "$g" -p "$p" -m "$m" --format "$f"; done
    run "check-$g-p$p-m$m" check --schedule "$g" -p "$p" -m "$m"
  done
done
run compare-p4-m8 compare --schedules all -p 4 -m 8
run compare-p4-m8-json compare --schedules all -p 4 -m 8 --json --link-latency 100ns
run compare-p8-m32-json compare --schedules all -p 8 -m 32 --json --iterations 2
run sim-1f1b-p128-m2048-json simulate --schedule 1f1b -p 128 -m 2048 --json
run sim-1f1b-p64-m512-trace simulate --schedule 1f1b -p 64 -m 512 --trace "trace-1f1b-p64-m512.json"
run sim-1f1b-p32-m256-trace-big simulate --schedule 1f1b -p 32 -m 256 --max-trace-ops 0 --trace "trace-1f1b-p32-m256-all.json"
echo "$n cases written to $out"
