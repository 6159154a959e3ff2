#!/bin/bash
# gpt-small Chimera (devices hold 16 blocks): profiled within 10 blocks (the cap) or 16.
set -u
out=$1; p=/tmp/pipesim-cal
cd /work/main
for n in 10 16; do
  date -u +"profile $n: %H:%M:%S" >&2
  $p profile --model gpt-small --micro-batch-sizes 1 --repeats 5 --stage-blocks $n --out $out/profile-$n.json 2> $out/profile-$n.err
done
for i in 1 2 3 4 5; do
  for n in 10 16; do
    date -u +"pair $i, within $n: %H:%M:%S" >&2
    $p validate --schedule chimera -p 2 -m 8 --iterations 3 --model gpt-small --cost $out/profile-$n.json --json > $out/pair$i-$n.json 2> $out/pair$i-$n.err
  done
done
date -u +"done: %H:%M:%S" >&2
