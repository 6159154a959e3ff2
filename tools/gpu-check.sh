#!/usr/bin/env bash
# GPU check of the CUDA backend (docs/gpu.md, issue #14): the whole measurement in one run of
# under 5 minutes of device time, in two halves:
#
#   here (has Eigen, GoogleTest, ... and nvcc):  tools/gpu-check.sh build [BIN_DIR]
#       configures $BUILD_DIR (default build-gpu; Release, PIPESIM_CUDA=ON, libstdc++ static),
#       builds pipesim, its CUDA plugin and every *_cuda_test, and collects them (below).
#                                                tools/gpu-check.sh collect BUILD_DIR [BIN_DIR]
#       copies an existing build's pipesim, plugin and *_cuda_test into BIN_DIR (default
#       build-gpu-bin, ignored by git: carry it) with ldd.txt, the shared libraries they need.
#   on the GPU machine (driver + CUDA 13 toolkit, no -dev packages, no network):
#                                                tools/gpu-check.sh run OUT_DIR [BIN_DIR]
#       1. env.txt: nvidia-smi, the binaries' ldd (a missing library is reported, not hidden)
#       2. stage_graphs_cuda_test, then every other *_cuda_test, with PIPESIM_REQUIRE_GPU=1
#          (a skip would be a failure there)
#       3. per model (gpt-tiny, gpt-small, gpt3-1.3b): pipesim profile --backend cuda on 1/4 of
#          the SMs (--virtual-devices 4, wall clock: what the executor measures), with the
#          interference curve (profile's default --neighbours: 3 of 4 virtual devices);
#          then pipesim validate --backend cuda of the four seed schedules (1f1b, chimera,
#          amp, amdp) on 4 virtual devices, CUDA graphs on, and the controls: 1f1b on 1 and
#          on 2 devices; on gpt-tiny also 1f1b with --cuda-graphs off (the launch path's cost)
#       4. pipesim run --json of gpt-tiny 1f1b, graphs on and off: the launch counts and the
#          ops' GPU time by CUDA events ("launch" in run's JSON)
#       writes logs, JSON and reports to OUT_DIR, results.tsv and summary.txt last (a table:
#       step, model, schedule, devices, graphs, error of the time per iteration, versions,
#       launch path, and validate's error split, docs/validation/README.md; FALLBACK where
#       graphs were asked for and a device fell back to direct
#       launches, which fails the check), and gpu-check.tar.gz of it all.
# Every step runs under `timeout`; the whole run stays under DEADLINE_S (default 270 s, so the
# machine's start and the copies fit in 5 minutes): later steps are skipped, and said so.
#
# Dry run, here, without a GPU: PIPESIM_GPU_CHECK_DRY=1 tools/gpu-check.sh run OUT_DIR [BIN_DIR]
# runs the same steps with --backend cpu and small sizes (gpt-tiny for every model, the
# tests without PIPESIM_REQUIRE_GPU, so they skip; no --virtual-devices or SM partitions):
# the script's paths, JSON parsing, summary and tar are exercised, not the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 build [BIN_DIR] | collect BUILD_DIR [BIN_DIR] | run OUT_DIR [BIN_DIR]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
mode=$1

collect() {  # collect BUILD_DIR BIN_DIR
  local build=$1 bin=$2
  local tests; tests=$(cd tests && ls *_cuda_test.cpp | sed 's/\.cpp$//')
  rm -rf "$bin" && mkdir -p "$bin"
  cp "$build/tools/pipesim" "$bin/"
  cp "$build"/lib*/pipesim/libpipesim_cuda.so "$bin/"  # the CUDA plugin, found next to the binaries
  for t in $tests; do cp "$build/tests/$t" "$bin/"; done
  for f in "$bin"/*; do echo "== $(basename "$f")"; ldd "$f"; done > "$build/gpu-check-ldd.txt"
  mv "$build/gpu-check-ldd.txt" "$bin/ldd.txt"
  echo "collected into $bin: $(ls "$bin" | tr '\n' ' ')"
}

if [[ $mode == build ]]; then
  bin=${2:-build-gpu-bin}
  set -e
  build=${BUILD_DIR:-build-gpu}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPESIM_CUDA=ON -DPIPESIM_BUILD_BENCH=OFF \
        -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
        -DCMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
  tests=$(cd tests && ls *_cuda_test.cpp | sed 's/\.cpp$//')
  cmake --build "$build" -j "${JOBS:-2}" --target pipesim pipesim_cuda_plugin $tests
  collect "$build" "$bin"
  exit 0
fi
if [[ $mode == collect ]]; then
  [[ $# -ge 2 ]] || usage
  set -e
  collect "$2" "${3:-build-gpu-bin}"
  exit 0
fi

[[ $mode == run && $# -ge 2 ]] || usage
out=$2
bin=${3:-build-gpu-bin}
mkdir -p "$out/reports"
DEADLINE_S=${DEADLINE_S:-270}
dry=${PIPESIM_GPU_CHECK_DRY:-0}
summary=()
note() { summary+=("$1"); echo "gpu-check: $1"; }
left() { echo $((DEADLINE_S - SECONDS)); }
# step NAME SECONDS CMD...: runs CMD under timeout (capped by the time left), output to OUT/NAME.log.
step() {
  local name=$1 limit=$2; shift 2
  local budget; budget=$(left)
  if ((budget < 15)); then note "$name: SKIPPED (time budget spent)"; return 99; fi
  ((limit > budget)) && limit=$budget
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2> "$out/$name.err"
  local rc=$?
  if ((rc == 124 || rc == 137)); then note "$name: TIMEOUT after ${limit}s"
  elif ((rc == 0)); then note "$name: ok ($((SECONDS - t0)) s)"
  else note "$name: FAILED (exit $rc, see $name.log and $name.err)"; fi
  return $rc
}

# The CUDA libraries: the toolkit's, else the pip wheels' (nvidia-cublas, nvidia-cuda-runtime).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, q, "lib") for p in nvidia.__path__ for q in ("cublas", "cuda_runtime")))' 2>/dev/null); do
  [[ -d $d ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

{
  echo "date: $(date -u)"; echo "host: $(uname -a)"; echo "cpus: $(nproc)"
  ((dry)) && echo "DRY RUN: --backend cpu, small sizes (PIPESIM_GPU_CHECK_DRY=1)"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  timeout 30 nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.sm --format=csv 2>&1
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  for f in "$bin"/*; do [[ -x $f && -f $f ]] && { echo "== ldd $(basename "$f")"; ldd "$f" 2>&1; }; done
} > "$out/env.txt" 2>&1
if [[ ! -x $bin/pipesim ]]; then
  note "no binaries in $bin: run 'tools/gpu-check.sh build' where the -dev packages are, and carry $bin"
  exit 1
fi
grep -q "not found" "$out/env.txt" &&
  note "missing shared libraries: $(grep 'not found' "$out/env.txt" | sort -u | tr -s ' \t' ' ' | tr '\n' ';')"
ps=$bin/pipesim

# What differs in a dry run: the backend, the models, the sizes, the flags only CUDA takes.
if ((dry)); then
  backend=cpu; require_gpu=(); models=(gpt-tiny); m_flags=(-m 4); repeats=(--repeats 3 --warmup 1)
  split=(); partition=(); clock=(--clock wall)
else
  backend=cuda; require_gpu=(env PIPESIM_REQUIRE_GPU=1); models=(gpt-tiny gpt-small gpt3-1.3b); m_flags=()
  repeats=(--repeats 10 --warmup 3); split=(--virtual-devices 4); partition=(--sm-partition auto); clock=(--clock wall)
fi
# The interference curve (issue #14 part 2), where this pipesim's profile can measure it.
# Its default is what the check wants: min(N - 1, 3) neighbours of --virtual-devices N on the
# GPU (3), min(cores - 1, 3) on the CPU of a dry run.
neighbours=()
if ! "$ps" profile --help 2>/dev/null | grep -q -- '--neighbours'; then
  note "profile: this pipesim has no --neighbours; profiles without an interference curve"
fi

# 2. CUDA tests: stage graphs first (this issue's), then the rest; a skip fails on the GPU.
tests=("$bin/stage_graphs_cuda_test")
for t in "$bin"/*_cuda_test; do [[ $t == "${tests[0]}" ]] || tests+=("$t"); done
for t in "${tests[@]}"; do
  [[ -x $t ]] || { note "$(basename "$t"): missing from $bin"; continue; }
  name=$(basename "$t")
  step "$name" 60 "${require_gpu[@]}" "$t" --gtest_output="xml:$out/$name.xml"
done

# results.tsv: one line per validate or run step, filled in from its JSON by summarize below.
printf 'step\tmodel\tschedule\tdevices\tgraphs\n' > "$out/steps.tsv"

# validate STEP MODEL SCHEDULE DEVICES GRAPHS PROFILE [FLAGS...]
validate() {
  local name=$1 model=$2 s=$3 p=$4 graphs=$5 cost=$6; shift 6
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$model" "$s" "$p" "$graphs" >> "$out/steps.tsv"
  local part=("${partition[@]}"); ((p == 1)) && part=()
  step "$name" 60 "$ps" validate --backend "$backend" --model "$model" --schedule "$s" -p "$p" "${m_flags[@]}" \
    --iterations 2 --timeout 60s --cuda-graphs "$graphs" "${part[@]}" --cost "$cost" \
    --report "$out/reports/$name.html" --json --tolerance 1000 "$@"  # exit 1: versions only; the 5 % verdict is in the table
}

# 3. Per model: its profile, the four seed schedules on 4 virtual devices, the controls.
for model in "${models[@]}"; do
  prof=$out/profile-$model.json
  mbs=1,2; [[ $model == gpt3-1.3b ]] && mbs=1; ((dry)) && mbs=1
  if ! step "profile-$model" 120 "$ps" profile --backend "$backend" --model "$model" --micro-batch-sizes "$mbs" \
         "${repeats[@]}" "${clock[@]}" "${split[@]}" "${neighbours[@]}" --out "$prof"; then
    note "profile-$model: no profile, so no validation of $model"
    continue
  fi
  for s in 1f1b chimera amp amdp; do
    validate "validate-$model-$s" "$model" "$s" 4 on "$prof" --trace "$out/reports/validate-$model-$s.trace.json"
  done
  validate "validate-$model-1f1b-one" "$model" 1f1b 1 on "$prof"
  validate "validate-$model-1f1b-two" "$model" 1f1b 2 on "$prof"
  [[ $model == gpt-tiny ]] && validate "validate-$model-1f1b-graphs-off" "$model" 1f1b 4 off "$prof"
done

# 4. The launch path itself: counts and GPU time (CUDA events) from run's JSON.
for graphs in on off; do
  printf '%s\t%s\t%s\t%s\t%s\n' "run-1f1b-graphs-$graphs" gpt-tiny 1f1b 4 "$graphs" >> "$out/steps.tsv"
  step "run-1f1b-graphs-$graphs" 60 "$ps" run --backend "$backend" --model gpt-tiny --schedule 1f1b -p 4 "${m_flags[@]}" \
    --iterations 2 --cuda-graphs "$graphs" "${partition[@]}" --json
done

# results.tsv from each step's JSON (stdout, NAME.log): error of the time per iteration,
# whether every op used the predicted weight version, and how the ops were launched.
summarize() {
  python3 - "$out" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "steps.tsv")), delimiter="\t"))
head = ["step", "model", "schedule", "devices", "graphs", "error", "<=5 %", "in p5..p95", "simulator / cost model (ops, comm)",
        "versions", "measured/iter", "launch"]
lines = []
for r in rows:
    cells = [r["step"], r["model"], r["schedule"], r["devices"], r["graphs"], "-", "-", "-", "-", "-", "-", "-"]
    log = os.path.join(out, r["step"] + ".log")
    try:
        j = json.load(open(log))
    except (OSError, ValueError):
        cells[5] = "no JSON" if os.path.exists(log) else "skipped"
        lines.append(cells)
        continue
    if "schedules" in j:
        j = j["schedules"][0]
    if "time_per_iteration_error" in j:
        cells[5] = "%+.1f %%" % (100 * j["time_per_iteration_error"])
        cells[6] = "yes" if abs(j["time_per_iteration_error"]) <= 0.05 else "no"
        cells[7] = "yes" if j.get("inside_interval") else "no"
        split = j.get("replay")  # the error split (docs/validation/README.md)
        if split:
            cells[8] = "%+.1f / %+.1f %%" % (100 * split["simulator_part"], 100 * split["cost_model_part"])
            if "cost_model_ops_part" in split:  # its op times, its links and collectives
                cells[8] += " (%+.1f, %+.1f)" % (100 * split["cost_model_ops_part"], 100 * split["cost_model_comm_part"])
        cells[9] = "exact" if j.get("versions_match") else "MISMATCH"
        m = j.get("measured", {})
    else:  # pipesim run
        m = j
    tpi = m.get("time_per_iteration_s")
    if tpi is not None:
        cells[10] = "%.3f ms" % (1e3 * tpi)
    launch = j.get("launch") or m.get("launch")
    if launch:
        cells[11] = "%s: %d graph launches, %d direct, GPU %.3f ms" % (
            launch["path"], launch["graph_launches"], launch["direct_ops"], 1e3 * launch["device_time_s"])
        if r["graphs"] == "on" and launch["path"] != "graphs":
            cells[11] = "FALLBACK " + cells[11]  # graphs were asked for and not (all) used
    lines.append(cells)
width = [max(len(str(c)) for c in col) for col in zip(head, *lines)]
fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, width)).rstrip()
with open(os.path.join(out, "results.tsv"), "w") as f:
    for cells in [head] + lines:
        f.write("\t".join(map(str, cells)) + "\n")
print(fmt(head))
for cells in lines:
    print(fmt(cells))
PY
}

table=$(summarize 2>&1) || note "summary: cannot read the steps' JSON (python3: $table)"
{
  echo "gpu-check $(date -u), ${SECONDS}s of ${DEADLINE_S}s$( ((dry)) && echo ', DRY RUN on the CPU backend')"
  printf '%s\n' "${summary[@]}"
  echo
  echo "$table"
} > "$out/summary.txt"
tar -czf "$out/gpu-check.tar.gz" -C "$out" --exclude gpu-check.tar.gz . 2>/dev/null
cat "$out/summary.txt"
grep -qE 'FAILED|TIMEOUT|missing|no binaries|MISMATCH|no JSON|FALLBACK' "$out/summary.txt" && exit 1
exit 0
