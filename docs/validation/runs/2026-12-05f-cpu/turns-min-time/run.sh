#!/bin/bash
# alternate default (turns 0.25 s) and --min-time 1s (turns 1 s) gpt-tiny profiles, AMDP p=4 settings
cd /work/main
for i in $(seq ${1:-6}); do
  for mt in 25ms 1s; do
    build/tools/pipesim profile --backend cpu --model gpt-tiny --micro-batch-sizes 1 --repeats 5 --stage-blocks 4 \
      --shared-core-threads 4 --min-time $mt --out docs/validation/runs/2026-12-05f-cpu/turns-min-time/p-$i-$mt.json --quiet 2>docs/validation/runs/2026-12-05f-cpu/turns-min-time/p-$i-$mt.err
  done
done
