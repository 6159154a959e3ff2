#!/usr/bin/env bash
# Every figure of docs/convergence.md: `pipesim converge` on the fortunes corpus (tools/bootstrap.sh
# installs it) for gpt-tiny (3 seeds, two learning rates) and the 1.5x wider
# examples/models/gpt-tiny-wide.json (2 seeds), time per iteration simulated for gpt3-1.3b on
# H100. Writes docs/convergence/<name>.json and .html; about 15 minutes on 2 cores.
#   bench/convergence.sh [path/to/pipesim]
set -euo pipefail
P=${1:-build/tools/pipesim}
out=docs/convergence
mkdir -p "$out"
common=(--data fortunes -p 4 -m 4 --validate-every 10 --model gpt3-1.3b --hardware h100-sxm --json)
"$P" converge "${common[@]}" --iterations 300 --seeds 1,2,3 --lr 3e-3 --report "$out/gpt-tiny.html" > "$out/gpt-tiny.json"
"$P" converge "${common[@]}" --iterations 300 --seeds 1,2 --lr 1e-3 --report "$out/gpt-tiny-lr1e-3.html" \
  > "$out/gpt-tiny-lr1e-3.json"
"$P" converge "${common[@]}" --iterations 200 --seeds 1,2 --lr 3e-3 --proxy-model examples/models/gpt-tiny-wide.json \
  --report "$out/gpt-tiny-wide.html" > "$out/gpt-tiny-wide.json"
for name in gpt-tiny gpt-tiny-lr1e-3 gpt-tiny-wide; do
  echo "== $name"
  python3 bench/convergence_summary.py "$out/$name.json" 3.4 3.2 3.05
done > "$out/summary.txt"
