#!/usr/bin/env bash
# Every figure of docs/convergence.md: `pipesim converge` on the fortunes corpus (tools/bootstrap.sh
# installs it), p 4, m 4, time per iteration simulated for gpt3-1.3b on H100:
#   gpt-tiny-tuned     1F1B, PipeDream, PipeDream-2BW, async 1F1B and AMDP, each at every rate of
#                      LRS (seeds 1,2,3, 300 iterations): each schedule's best rate, and every rate
#   gpt-tiny-variants  AMP's max-active-keys x min-update-frequency, PipeDream-2BW's two policies,
#                      AMDP's three update positions, 1F1B beside them, at lr 1e-3 and 3e-3 (each
#                      variant's better one; seeds 1,2, 300 iterations)
#   gpt-tiny-wide      examples/models/gpt-tiny-wide.json, the same five schedules at each of WIDE_LRS
#                      (seeds 1,2, 200 iterations)
# AMP at its defaults runs async 1F1B's op order exactly (the same numbers), so it appears only in
# the variants. Writes docs/convergence/<name>.json, .html and .txt (the table) and summary.txt
# (more targets, bench/convergence_summary.py). 20-35 minutes on 2 cores, depending on the load
# (the elapsed time and load average go in summary.txt).
#   bench/convergence.sh [path/to/pipesim]
set -euo pipefail
P=${1:-build/tools/pipesim}
out=docs/convergence
mkdir -p "$out"
LRS=3e-4,1e-3,3e-3,1e-2
WIDE_LRS=1e-3,3e-3,1e-2
five=1f1b,pipedream,pipedream-2bw,async-1f1b,amdp
common=(--data fortunes -p 4 -m 4 --validate-every 10 --model gpt3-1.3b --hardware h100-sxm)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
SECONDS=0
trap 'rm -f "$out"/*.tmp' EXIT

# converge NAME ARGS...: NAME.json, NAME.html and NAME.txt (the report's table), each written
# to a temporary file first, so a failed run leaves the previous figures.
converge() {
  local name=$1
  shift
  "$P" converge "${common[@]}" "$@" --json --report "$out/$name.html" > "$out/$name.json.tmp"
  mv "$out/$name.json.tmp" "$out/$name.json"
  python3 -c 'import html, re, sys
page = open(sys.argv[1]).read()
sys.stdout.write(html.unescape(re.search(r"<pre>(.*)</pre>", page, re.S).group(1)))' "$out/$name.html" \
    > "$out/$name.txt.tmp"
  mv "$out/$name.txt.tmp" "$out/$name.txt"
  echo "$name done after ${SECONDS} s" >&2
}

converge gpt-tiny-tuned --schedules "$five" --iterations 300 --seeds 1,2,3 --lr "$LRS"
converge gpt-tiny-variants --schedules 1f1b,amp,pipedream-2bw,amdp --max-active-keys 1,2,4 --min-update-frequency 1,4 \
  --twobw-policy double-buffer,naive --amdp-update code,early,late --iterations 300 --seeds 1,2 --lr 1e-3,3e-3
converge gpt-tiny-wide --proxy-model examples/models/gpt-tiny-wide.json --schedules "$five" --iterations 200 --seeds 1,2 \
  --lr "$WIDE_LRS"

summary() { python3 bench/convergence_summary.py "$@" 3.4 3.2 3.05; }
{
  echo "# bench/convergence.sh, started $started on $(uname -n) ($(nproc) cores), load average $load_before;"
  echo "# $SECONDS s in all, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "== gpt-tiny-tuned: each schedule at its best rate for each target"
  summary "$out/gpt-tiny-tuned.json"
  for lr in ${LRS//,/ }; do
    echo "== gpt-tiny-tuned at lr $lr for every schedule"
    summary --lr "$lr" "$out/gpt-tiny-tuned.json"
  done
  echo "== gpt-tiny-variants: each variant at its better rate for each target"
  summary "$out/gpt-tiny-variants.json"
  echo "== gpt-tiny-wide: each schedule at its best rate for each target"
  summary "$out/gpt-tiny-wide.json"
  for lr in ${WIDE_LRS//,/ }; do
    echo "== gpt-tiny-wide at lr $lr for every schedule"
    summary --lr "$lr" "$out/gpt-tiny-wide.json"
  done
} > "$out/summary.txt.tmp"
mv "$out/summary.txt.tmp" "$out/summary.txt"
