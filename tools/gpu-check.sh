#!/usr/bin/env bash
# GPU check of the CUDA backend (docs/gpu.md), in two halves:
#
#   here (has Eigen, GoogleTest, ... and nvcc):  tools/gpu-check.sh build [BIN_DIR]
#       configures $BUILD_DIR (default build-gpu; Release, PIPESIM_CUDA=ON, sm_90, libstdc++ static),
#       builds pipesim and every *_cuda_test, copies them into BIN_DIR (default build-gpu-bin,
#       ignored by git: carry it) with ldd.txt, the shared libraries they need.
#   on the GPU machine (driver + CUDA 13 toolkit, no -dev packages, no network):
#                                                tools/gpu-check.sh run OUT_DIR [BIN_DIR]
#       1. env.txt: nvidia-smi, the binaries' ldd (a missing library is reported, not hidden)
#       2. every *_cuda_test with PIPESIM_REQUIRE_GPU=1 (a skip would be a failure there)
#       3. pipesim profile --backend cuda (on failure: FAILED, and --backend cpu for step 4)
#       4. pipesim validate (else pipesim run), per seed schedule on 4 virtual devices
#       5. pipesim run --backend cuda (the CUDA executor), per seed schedule on 4 virtual
#          devices, where step 4 could not use the CUDA backend itself
#       writes logs and reports to OUT_DIR, summary.txt last, and gpu-check.tar.gz of it all.
# Every step runs under `timeout`; the whole run stays under ~9 minutes (DEADLINE_S).
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 build [BIN_DIR] | run OUT_DIR [BIN_DIR]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
mode=$1

if [[ $mode == build ]]; then
  bin=${2:-build-gpu-bin}
  set -e
  build=${BUILD_DIR:-build-gpu}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPESIM_CUDA=ON -DPIPESIM_BUILD_BENCH=OFF \
        -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
  tests=$(cd tests && ls *_cuda_test.cpp | sed 's/\.cpp$//')
  cmake --build "$build" -j "${JOBS:-2}" --target pipesim $tests
  rm -rf "$bin" && mkdir -p "$bin"
  cp "$build/tools/pipesim" "$bin/"
  for t in $tests; do cp "$build/tests/$t" "$bin/"; done
  for f in "$bin"/*; do echo "== $(basename "$f")"; ldd "$f"; done > "$build/gpu-check-ldd.txt"
  mv "$build/gpu-check-ldd.txt" "$bin/ldd.txt"
  echo "built into $bin: $(ls "$bin" | tr '\n' ' ')"
  exit 0
fi

[[ $mode == run && $# -ge 2 ]] || usage
out=$2
bin=${3:-build-gpu-bin}
mkdir -p "$out/reports"
DEADLINE_S=${DEADLINE_S:-540}
summary=()
note() { summary+=("$1"); echo "gpu-check: $1"; }
left() { echo $((DEADLINE_S - SECONDS)); }
# step NAME SECONDS CMD...: runs CMD under timeout (capped by the time left), output to OUT/NAME.log.
step() {
  local name=$1 limit=$2; shift 2
  local budget; budget=$(left)
  if ((budget < 20)); then note "$name: SKIPPED (time budget spent)"; return 99; fi
  ((limit > budget)) && limit=$budget
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  if ((rc == 124 || rc == 137)); then note "$name: TIMEOUT after ${limit}s"
  elif ((rc == 0)); then note "$name: ok"
  else note "$name: FAILED (exit $rc, see $name.log)"; fi
  return $rc
}

# The CUDA libraries: the toolkit's, else the pip wheels' (nvidia-cublas, nvidia-cuda-runtime).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, q, "lib") for p in nvidia.__path__ for q in ("cublas", "cuda_runtime")))' 2>/dev/null); do
  [[ -d $d ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

{
  echo "date: $(date -u)"; echo "host: $(uname -a)"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  for f in "$bin"/*; do [[ -x $f && -f $f ]] && { echo "== ldd $(basename "$f")"; ldd "$f" 2>&1; }; done
} > "$out/env.txt" 2>&1
if [[ ! -x $bin/pipesim ]]; then
  note "no binaries in $bin: run 'tools/gpu-check.sh build' where the -dev packages are, and carry $bin"
elif grep -q "not found" "$out/env.txt"; then
  note "missing shared libraries: $(grep 'not found' "$out/env.txt" | sort -u | tr -s ' \t' ' ' | tr '\n' ';')"
fi

# 2. CUDA kernel tests: a GPU is required here, so a skip fails.
for t in "$bin"/*_cuda_test; do
  [[ -x $t ]] || continue
  name=$(basename "$t")
  PIPESIM_REQUIRE_GPU=1 step "$name" 240 "$t" --gtest_output="xml:$out/$name.xml"
done

# 3. Profile (needs `pipesim profile`).
profile=""
if [[ -x $bin/pipesim ]] && "$bin/pipesim" --help 2>/dev/null | grep -qE '^\s+profile\s'; then
  if step profile-cuda 120 "$bin/pipesim" profile --backend cuda --model gpt-tiny --micro-batch-sizes 1,2 \
       --repeats 5 --warmup 2 --out "$out/profile-cuda.json"; then
    profile=$out/profile-cuda.json
  elif step profile-cpu 120 "$bin/pipesim" profile --backend cpu --model gpt-tiny --micro-batch-sizes 1,2 \
         --repeats 3 --warmup 1 --clock thread-cpu --out "$out/profile-cpu.json"; then
    profile=$out/profile-cpu.json
    note "profile: CUDA profile failed (see profile-cuda.log); validation uses the CPU profile"
  fi
else
  note "profile: this pipesim has no 'profile' subcommand: skipped"
fi

# 4. Every seed schedule on 4 virtual devices: `pipesim validate` (measured against predicted)
# where this pipesim has it, else `pipesim run` (measured only). The CUDA backend where the
# subcommand takes it (probed once on 1f1b), else the CPU one, said in the summary.
schedules=(gpipe 1f1b interleaved zb-h1 zb-h2 chimera pipedream pipedream-2bw async-1f1b amp amdp dualpipe dualpipev)
has_command() { [[ -x $bin/pipesim ]] && "$bin/pipesim" --help 2>/dev/null | grep -qE "^\s+$1\s"; }
if has_command validate; then sub=validate; elif has_command run; then sub=run; else sub=""; fi
if [[ -n $sub ]]; then
  "$bin/pipesim" "$sub" --help > "$out/$sub-help.txt" 2>&1
  takes() { grep -q -- "$1" "$out/$sub-help.txt"; }
  backend=cpu
  if takes --backend; then
    if step "$sub-cuda-probe" 60 "$bin/pipesim" "$sub" --backend cuda --schedule 1f1b -p 4; then backend=cuda
    else note "$sub: the CUDA backend failed on 1f1b (see $sub-cuda-probe.log); the schedules run on the CPU backend"; fi
  fi
  for s in "${schedules[@]}"; do
    args=("$sub" --schedule "$s" -p 4)
    takes --backend && args+=(--backend "$backend")
    takes --iterations && args+=(--iterations 2)
    takes '--timeout' && args+=(--timeout 30s)
    [[ -n $profile ]] && takes --cost && args+=(--cost "$profile")
    takes --report && args+=(--report "$out/reports/$s.html")
    takes --trace && args+=(--trace "$out/reports/$s.trace.json")
    step "$sub-$s" 60 "$bin/pipesim" "${args[@]}"
  done
else
  note "validate/run: this pipesim has neither subcommand: skipped"
fi

# 5. The CUDA executor (executor/cuda_backend.hpp) on every seed schedule, 4 virtual devices on
# the GPU, through `pipesim run` (which takes --backend cuda), unless step 4 already used it.
if [[ ${backend:-cpu} != cuda ]] && has_command run; then
  "$bin/pipesim" run --help > "$out/run-help.txt" 2>&1
  for s in "${schedules[@]}"; do
    args=(run --backend cuda --schedule "$s" -p 4)
    grep -q -- --iterations "$out/run-help.txt" && args+=(--iterations 2)
    grep -q -- --timeout "$out/run-help.txt" && args+=(--timeout 30s)
    grep -q -- --trace "$out/run-help.txt" && args+=(--trace "$out/reports/$s.cuda-run.trace.json")
    step "run-cuda-$s" 60 "$bin/pipesim" "${args[@]}"
  done
fi

{ echo "gpu-check $(date -u), ${SECONDS}s"; printf '%s\n' "${summary[@]}"; } > "$out/summary.txt"
tar -czf "$out/gpu-check.tar.gz" -C "$out" --exclude gpu-check.tar.gz . 2>/dev/null
cat "$out/summary.txt"
grep -qE 'FAILED|TIMEOUT|missing|no binaries' "$out/summary.txt" && exit 1
exit 0
