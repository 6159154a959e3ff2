#!/usr/bin/env bash
# Runs the real binary on one example of every class of bad input and prints a Markdown
# table of what the user sees (the docs/reliability.md table is this script's output).
#   fuzz/bad_inputs.sh [PIPESIM]       default: build/tools/pipesim
set -uo pipefail
cd "$(dirname "$0")/.."
P=$(realpath "${1:-build/tools/pipesim}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"

# row CLASS FILE-CONTENT-OR-EMPTY ARGS...: writes the file (if any), runs pipesim ARGS, and
# prints the last line of its output (stderr and stdout together) and the exit code.
row() {
  local class=$1 name=$2 content=$3
  shift 3
  [[ -n $name ]] && printf '%b' "$content" >"$name"
  local out code
  out=$("$P" "$@" 2>&1 >/dev/null)
  code=$?
  [[ -z $out ]] && out=$("$P" "$@" 2>&1 | tail -1)
  local shown=$content
  [[ ${#shown} -gt 50 ]] && shown="${shown:0:47}..."
  local args="$*"
  printf '| %s | `%s` | `pipesim %s` | %s | `%s` |\n' "$class" "${shown//|/\\|}" "${args//$'\n'/\\n}" "$code" \
    "${out//|/\\|}"
}

# row_shell CLASS COMMAND-LINE: the same for a shell command line in which $P is pipesim.
row_shell() {
  local class=$1 line=$2 out code
  out=$(P="$P" bash -c "$line" 2>&1 >/dev/null)
  code=$?
  local shown=${line//\$P/pipesim}
  printf '| %s | `` | `%s` | %s | `%s` |\n' "$class" "${shown//|/\\|}" "$code" "${out//|/\\|}"
}

echo '| class | input | command | exit | what the user sees |'
echo '|---|---|---|---|---|'
# Schedule files
row "truncated CSV" t.csv '0F0,0F1,0B0,0B' check --schedule-file t.csv
row "truncated JSON" t.json '{"ops": [["0F0", "0B' check --schedule-file t.json
row "empty file" e.csv '' check --schedule-file e.csv
row "empty schedule (JSON)" e.json '{"ops": [[]]}' check --schedule-file e.json
row "no ops field" n.json '{"name": "x"}' check --schedule-file n.json
row "wrong type" w.json '{"ops": [["0F0", 3]]}' check --schedule-file w.json
row "wrong type (field)" w2.json '{"num_stages": "4", "ops": [["0F0", "0B0"]]}' check --schedule-file w2.json
row "unknown field" u.json '{"num_stage": 4, "ops": [["0F0", "0B0"]]}' check --schedule-file u.json
row "unknown op kind" k.csv '0F0,0X0,0B0' check --schedule-file k.csv
row "PyTorch comm action" c.csv '0F0,0SEND_F0,0B0' check --schedule-file c.csv
row "negative id" neg.csv '0F-1' check --schedule-file neg.csv
row "negative count (JSON)" neg.json '{"num_stages": -1, "ops": [["0F0", "0B0"]]}' check --schedule-file neg.json
row "huge number in an op" h.csv '0F99999999999' check --schedule-file h.csv
row "huge number (JSON)" h.json '{"num_stages": 1e400, "ops": [["0F0"]]}' check --schedule-file h.json
row "huge micro-batch id" id.csv '0F2000000000,0B2000000000' simulate --schedule-file id.csv
row "huge iteration count" it.json '{"iterations": 2147483647, "ops": [["0F0", "0B0"]]}' simulate --schedule-file it.json
row "header claims more micro-batches" mc.json '{"microbatches": 2000000000, "ops": [["0F0", "0B0"]]}' simulate --schedule-file mc.json
row "duplicate op" d.csv '0F0,0F0,0B0' simulate --schedule-file d.csv
row "missing backward" mb.csv '0F0,0F1,0B0' simulate --schedule-file mb.csv
row "missing forward" mf.csv '0B0' simulate --schedule-file mf.csv
row "backward before forward" bf.csv '0B0,0F0' simulate --schedule-file bf.csv
row "stage on two devices" two.csv '0F0,1F0\n1B0,0B0' check --schedule-file two.csv
row "op on the wrong device" wd.json '{"placement": [[0, 1]], "ops": [["0F0", "1F0", "1B0", "0B0"], []]}' check --schedule-file wd.json
row "stage with no ops" gap.csv '0F0,0B0,2F0,2B0' check --schedule-file gap.csv
row "cycle (deadlock)" cy.csv '0F0,0B0,0F1,0B1\n1F1,1B1,1F0,1B0' simulate --schedule-file cy.csv
row "unmatched collective" gs.json '{"placement": [[0], [1]], "ops": [["0F0", "0B0", "0GRADSYNC"], ["1:0F0", "1:0B0"]]}' simulate --schedule-file gs.json
row "2bw batch before its weights" tb.json '{"weight_policy": "2bw", "microbatches": 1, "iterations": 3, "ops": [["0F2", "0B2", "0OPT", "0F0", "0B0", "0OPT", "0F1", "0B1", "0OPT"]]}' simulate --schedule-file tb.json
row "non-UTF-8 bytes (CSV)" nu.csv '0F0,0\xff0' check --schedule-file nu.csv
row "non-UTF-8 bytes (JSON)" nu.json '{"name": "\xff", "ops": [["0F0"]]}' check --schedule-file nu.json
row "control characters" cc.json '{"ops": [["0F0\\n0B0\\u001b[31m"]]}' check --schedule-file cc.json
row "deeply nested JSON" deep.json "{\"version\": $(printf '[%.0s' {1..100000})$(printf ']%.0s' {1..100000}), \"ops\": [[\"0F0\"]]}" check --schedule-file deep.json
row "binary garbage" g.json '\x01\x02\xfe' check --schedule-file g.json
row "unknown extension" s.txt '0F0' check --schedule-file s.txt
row "missing file" '' '' check --schedule-file nosuch.csv
mkdir -p dir.csv
row "a directory" '' '' check --schedule-file dir.csv
mkfifo fifo.csv
row "a FIFO (never blocks)" '' '' check --schedule-file fifo.csv
ln -s /dev/zero zero.csv
row "a device" '' '' check --schedule-file zero.csv
row "duplicate key (JSON)" dk.json '{"ops": [["0F0", "0B0"]], "ops": [["0F0"]]}' check --schedule-file dk.json
row "control characters in a name" nm.json '{"name": "a\\u001b[31m", "ops": [["0F0", "0B0"]]}' check --schedule-file nm.json
row "duplicate GradSync" dg.csv '0F0,0B0,0GRADSYNC,0GRADSYNC,0OPT' simulate --schedule-file dg.csv
row "flag against the file" ok.csv '0F0,0B0' simulate --schedule-file ok.csv -p 8
row "generator flag with a file" '' '' simulate --schedule-file ok.csv --pipelines 4
row "BOM and CRLF (accepted)" bom.csv '\xef\xbb\xbf0F0,0B0\r\n' check --schedule-file bom.csv
# Generator flags and sizes
row "absurd size" '' '' simulate -p 1000000000 -m 8
row "stages x chunks beyond 32 bits" '' '' simulate --schedule interleaved -p 4096 -v 1048576 -m 1
row "trace tracks over the budget" '' '' simulate -p 20000 -m 1 --trace t.json --trace-budget 1MB
row "global batch 0" '' '' simulate --model gpt3-1.3b --global-batch-size 0
row "price beyond any GPU" '' '' simulate --model gpt3-1.3b --price-per-hour 1e300
row_shell "output through a dangling link" 'ln -s /nonexistent/x.json d.json && $P simulate --trace d.json'
row "too big for this machine" '' '' simulate -p 1024 -m 65536 --max-memory 8GiB
row "zero micro-batches" '' '' simulate -m 0
row "negative stages" '' '' simulate -p -4
row "not a number" '' '' simulate -p four
row "hexadecimal" '' '' simulate -p 0x10
row "leading zeros (decimal, accepted)" '' '' check -p 010
row "out of range" '' '' simulate -p 99999999999
row "negative unsigned" '' '' simulate --max-trace-ops -1
row "empty value" '' '' simulate --trace ''
row "a number that is not finite" '' '' run --lr nan
row "boolean word" '' '' simulate --model gpt3-1.3b --sequence-parallel yes
row "product overflow" '' '' simulate --model gpt3-1.3b --nodes 100000 --gpus-per-node 100000
row "ignored flag" '' '' simulate --model gpt3-1.3b --fwd 5ms
row "more stages than layers" '' '' simulate --model gpt-tiny --nodes 8 -p 64
row "stage that does not exist" '' '' simulate --stage-cost 9:1ms:2ms
row "below the resolution" '' '' simulate --fwd 0.0001ns
row "unknown schedule" '' '' simulate --schedule 2f2b
row "constraint of a schedule" '' '' simulate --schedule interleaved -p 4 -m 9
# Durations, sizes, rates
row "negative duration" '' '' simulate --fwd -1ms
row "zero durations (accepted)" '' '' check --fwd 0ns --bwd 0ns
row "duration without unit" '' '' simulate --fwd 5
row "unknown unit" '' '' simulate --fwd 1parsec
row "NaN / infinity" '' '' simulate --link-bandwidth nanGB/s
row "zero bandwidth" '' '' simulate --link-bandwidth 0GB/s
row "huge duration" '' '' simulate --fwd 99999999999s
row "time overflow in the run" '' '' simulate -p 2 -m 4 --fwd 9000000000s
row "memory overflow in the run" '' '' simulate -p 2 -m 4 --activation-bytes 5000000TB
row "fraction out of range" '' '' simulate --input-grad-free-fraction 2
row "bad --stage-cost" '' '' simulate --stage-cost 1:2ms
row "newline in an argument" '' '' simulate "--schedule=1f1b
x"
row "unknown flag" '' '' simulate --fwdd 1ms
# Catalog and config files
row "catalog: unknown field" cat.json '{"links": [{"name": "a", "bandwidth": "1GB/s", "latency": "1us", "source": "t", "colour": "red"}]}' catalog --file cat.json
row "catalog: wrong unit" cat2.json '{"links": [{"name": "a", "bandwidth": "1GB", "latency": "1us", "source": "t"}]}' catalog --file cat2.json
row "catalog: negative memory" cat3.json '{"gpus": [{"name": "g", "peak_flops": {"bf16": "1TFLOP/s"}, "hbm_bandwidth": "1TB/s", "memory": "-1GiB", "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr", "source": "t"}]}' catalog --file cat3.json
row "catalog: duplicate name" cat4.json '{"links": [{"name": "a", "bandwidth": "1GB/s", "latency": "1us", "source": "t"}, {"name": "a", "bandwidth": "2GB/s", "latency": "1us", "source": "t"}]}' catalog --file cat4.json
row "catalog: deeply nested" cat5.json "{\"models\": [$(printf '[%.0s' {1..100000})$(printf ']%.0s' {1..100000})]}" catalog --file cat5.json
row "config: unknown key" cfg.json '{"stage": 4}' simulate --config cfg.json
row "config: wrong type" cfg2.json '{"stages": [[4]]}' simulate --config cfg2.json
row "config: bad value" cfg3.json '{"fwd": "fast"}' simulate --config cfg3.json
row "config: value without unit" cfg8.json '{"fwd": 5}' simulate --config cfg8.json
row "config: invalid JSON" cfg4.json '{"fwd": ' simulate --config cfg4.json
row "config: duplicate key" cfg5.json '{"tp": 2, "tp": 4}' simulate --config cfg5.json
row "config: hexadecimal" cfg6.json '{"stages": "0x10"}' simulate --config cfg6.json
row "config: excluded pair" cfg7.json '{"schedule": "gpipe", "schedule-file": "ok.csv"}' simulate --config cfg7.json
printf '{"fwd": "%s"}' "$(head -c 1100000 /dev/zero | tr '\0' 1)" > big.json
row "config: too large" '' '' simulate --config big.json
# Memory
row "sweep: results too large" '' '' sweep --model gpt3-1.3b --gpus 8 --max-memory 1KiB
row "sweep: iterations" '' '' sweep --model gpt3-1.3b --gpus 8 --iterations 1000000
row "sweep: staleness filter, one iteration" '' '' sweep --model gpt3-1.3b --gpus 8 --iterations 1 --synchronous-only
row "run: micro-batch size" '' '' run --micro-batch-size 100000 --max-memory 1GiB
row "profile: link sizes" '' '' profile --model gpt-tiny --out p.json --link-sizes 1KiB,3GiB
# Outputs
row "trace over --max-trace-ops" '' '' simulate -p 8 -m 64 --trace t.trace.json --max-trace-ops 100
row "unwritable trace" '' '' simulate --trace /nonexistent/t.json
row "two outputs, one file" '' '' simulate --trace x.json --report ./x.json
printf '{"stages": 2}' > c.json
row "output over its input" '' '' simulate --config c.json --save-config c.json
mkfifo out.fifo
row "a FIFO nobody reads" '' '' simulate --trace out.fifo
row "full disk" '' '' simulate --trace /dev/full
row_shell "file-size limit" 'ulimit -f 8; exec $P simulate -p 8 -m 64 --trace t.json'
row_shell "closed pipe" '$P schedule --format csv -p 64 -m 8192 | head -c 1 >/dev/null; exit ${PIPESTATUS[0]}'
row_shell "out of memory" 'ulimit -v 1500000; exec $P simulate -p 256 -m 65536 --max-memory 1TiB' 
