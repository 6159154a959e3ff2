#!/bin/bash
# Pairs of AMDP gpt-tiny validations (4 device threads on 2 cores), the binary with the
# shared-core turns timed for 0.25 s (A) and for 1 s (B), in alternation:
#   run.sh OUT PAIRS PIPESIM_A PIPESIM_B
set -euo pipefail
out=$1; pairs=$2; a=$3; b=$4
mkdir -p "$out"
for i in $(seq "$pairs"); do
  for side in A B; do
    bin=$a; [ "$side" = B ] && bin=$b
    "$bin" validate --schedule amdp -p 4 -m 4 --iterations 20 --warmup-iterations 3 --model gpt-tiny --repeats 5 \
      --json > "$out/p$side$i.json" 2> "$out/p$side$i.err" || true
  done
done
