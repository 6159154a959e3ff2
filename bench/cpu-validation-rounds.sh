#!/bin/bash
# The CPU measurement of issue 14 (docs/validation/cpu.md): ROUNDS consecutive rounds of the
# eight cases, gpt-small and gpt-tiny with 1F1B, Chimera and AMP at p = 2 and AMDP at p = 4
# (4 device threads on this machine's cores), each `pipesim validate` profiling anew; the
# JSON of each command goes to OUT/roundN/. 1F1B, Chimera and AMP run in one command (set P on):
# validate profiles each footprint, the blocks a device holds (Chimera's devices hold two
# stages each), just before its schedules' runs. Run on a quiet machine; never pipe pipesim's
# output into another process while it measures (a second process on 2 cores doubles times).
#
#   bench/cpu-validation-rounds.sh OUT [ROUNDS=3] [PIPESIM=build/tools/pipesim] [CALIBRATION...]
#
# CALIBRATION: past validate --json outputs (files or folders, e.g. earlier sets' OUT), passed
# to every command as --calibration (docs/cost-model.md, "Calibrated intervals").
set -euo pipefail
out=${1:?usage: $0 OUT [ROUNDS] [PIPESIM] [CALIBRATION...]}
rounds=${2:-3}
pipesim=${3:-build/tools/pipesim}
shift $(( $# < 3 ? $# : 3 ))
calibration=()
for c in "$@"; do calibration+=(--calibration "$c"); done
for r in $(seq "$rounds"); do
  dir="$out/round$r"
  mkdir -p "$dir"
  date -u +"round $r: %Y-%m-%dT%H:%M:%SZ" >&2
  "$pipesim" validate --schedules 1f1b,chimera,amp -p 2 -m 8 --iterations 3 --model gpt-small --repeats 5 --json "${calibration[@]}" \
    > "$dir/small.json" 2> "$dir/small.err" || true
  "$pipesim" validate --schedule amdp -p 4 -m 8 --iterations 3 --model gpt-small --repeats 5 --json "${calibration[@]}" \
    > "$dir/small-amdp.json" 2> "$dir/small-amdp.err" || true
  "$pipesim" validate --schedules 1f1b,chimera,amp -p 2 -m 4 --iterations 20 --warmup-iterations 3 --model gpt-tiny \
    --repeats 5 --json "${calibration[@]}" > "$dir/tiny.json" 2> "$dir/tiny.err" || true
  "$pipesim" validate --schedule amdp -p 4 -m 4 --iterations 20 --warmup-iterations 3 --model gpt-tiny --repeats 5 \
    --json "${calibration[@]}" > "$dir/tiny-amdp.json" 2> "$dir/tiny-amdp.err" || true
done
