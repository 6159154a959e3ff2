#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang (-fsanitize=fuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer) and runs each one for SECONDS, one after the other, starting
# from its seed corpus in fuzz/corpus/<harness>/. Inputs that crash, hang or allocate too
# much land in fuzz/findings/<harness>/; new coverage in <build>/corpus/<harness>/.
#
#   fuzz/run.sh [SECONDS] [HARNESS...]     default: 60 seconds, every harness
#   PIPESIM_FUZZ_BUILD=dir                 build folder (default build-fuzz-clang)
#   PIPESIM_FUZZ_RUNS=N                    stop a harness after N executions if that comes
#                                          before SECONDS (docs/reliability.md: 1000000)
#   PIPESIM_FUZZ_MERGE=1                   afterwards, add the inputs that found new
#                                          coverage to fuzz/corpus/<harness>/ (minimized)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ $# -gt 0 ]] && shift
harnesses=("$@")
[[ ${#harnesses[@]} -eq 0 ]] && harnesses=(op_text units schedule_csv schedule_json catalog cli_flags experiment_config profile runs_csv cli)
build=${PIPESIM_FUZZ_BUILD:-build-fuzz-clang}

cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPIPESIM_FUZZ=ON -DPIPESIM_SANITIZE=ON -DPIPESIM_BUILD_TESTS=OFF -DPIPESIM_BUILD_BENCH=OFF -DPIPESIM_CUDA=OFF >/dev/null
cmake --build "$build" -j2 --target "${harnesses[@]/%/_fuzz}" pipesim

# The generator names and their settings come from the generators' metadata, not from
# fuzz/dict/: each dictionary is fuzz/dict/<harness>.dict plus, from `pipesim schedule
# --list`, the first column (the names) and each setting's flag ("--concat"), its key in a
# config file ("\"concat\"") and its choices ("direct|doubling|halving").
mkdir -p "$build/dict"
list=$("$build/tools/pipesim" schedule --list | tail -n +3)
names=$(awk '{print "\"" $1 "\""}' <<<"$list"
        grep -oE -- '--[a-z0-9-]+' <<<"$list" | sort -u | sed -E 's/^--(.*)$/"--\1"\n"\\"\1\\""/'
        grep -oE -- '--[a-z0-9-]+ [a-z0-9-]+(\|[a-z0-9-]+)+' <<<"$list" | cut -d' ' -f2 | tr '|' '\n' | sort -u |
          sed 's/.*/"&"/')

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for h in "${harnesses[@]}"; do
  seeds=fuzz/corpus/$h
  work=$build/corpus/$h
  findings=fuzz/findings/$h
  mkdir -p "$work" "$findings"
  dict=()
  if [[ -f fuzz/dict/$h.dict ]]; then
    { cat "fuzz/dict/$h.dict"; echo "$names"; } >"$build/dict/$h.dict"
    dict=(-dict="$build/dict/$h.dict")
  fi
  [[ -n ${PIPESIM_FUZZ_RUNS:-} ]] && dict+=(-runs="$PIPESIM_FUZZ_RUNS")
  [[ $h == cli ]] && dict+=(-close_fd_mask=2)  # the CLI's one-line errors, for every input
  echo "== $h: $seconds s =="
  # New inputs go to the first folder ($work); the seeds stay as committed.
  if ! "$build/fuzz/${h}_fuzz" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$findings/" "$work" "$seeds" \
       >"$build/$h.log" 2>&1; then
    status=1
    echo "   FOUND A PROBLEM: see $build/$h.log and $findings/"
  fi
  # The last status line ("#N DONE cov: ... ft: ... corp: ...") and the execution count.
  grep -E '^#[0-9]+' "$build/$h.log" | tail -1 || true
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$build/$h.log" || true
  if [[ ${PIPESIM_FUZZ_MERGE:-0} == 1 ]]; then
    "$build/fuzz/${h}_fuzz" -merge=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 "$seeds" "$work" \
      >"$build/$h.merge.log" 2>&1 || true
    echo "   corpus: $(ls "$seeds" | wc -l) files in $seeds"
  fi
done
exit $status
