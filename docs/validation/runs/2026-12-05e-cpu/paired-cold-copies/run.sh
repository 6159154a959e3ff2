#!/bin/bash
# Pairs of validate on gpt-tiny, the binary before (/tmp/pipesim-s, copies in and sums timed
# from one warm vector) and after (/tmp/pipesim-t, each from a cold one), in alternation.
# Each validate profiles anew.
out=$(dirname "$0")
for i in 1 2 3 4 5 6; do
  for b in s t; do
    /tmp/pipesim-$b validate --schedule chimera -p 2 -m 4 --iterations 20 --warmup-iterations 3 --model gpt-tiny \
      --repeats 5 --json > "$out/chimera-$i-$b.json" 2> /dev/null
    /tmp/pipesim-$b validate --schedule amdp -p 4 -m 4 --iterations 20 --warmup-iterations 3 --model gpt-tiny \
      --repeats 5 --json > "$out/amdp-$i-$b.json" 2> /dev/null
  done
done
