#!/usr/bin/env bash
# GPU check of the CUDA backend (docs/gpu.md), in two halves:
#
#   here (has Eigen, GoogleTest, ... and nvcc):  tools/gpu-check.sh build [BIN_DIR]
#       configures $BUILD_DIR (default build-gpu; Release, PIPESIM_CUDA=ON, sm_90, libstdc++ static),
#       builds pipesim, its CUDA plugin and every *_cuda_test, copies them into BIN_DIR (default build-gpu-bin,
#       ignored by git: carry it) with ldd.txt, the shared libraries they need.
#   on the GPU machine (driver + CUDA 13 toolkit, no -dev packages, no network):
#                                                tools/gpu-check.sh run OUT_DIR [BIN_DIR]
#       1. env.txt: nvidia-smi, the binaries' ldd (a missing library is reported, not hidden)
#       2. every *_cuda_test with PIPESIM_REQUIRE_GPU=1 (a skip would be a failure there)
#       3. pipesim profile --backend cuda of gpt-tiny: on 1/4 of the SMs (the 4 virtual
#          devices' share), on the whole GPU, and by CUDA events (GPU time only)
#       4. pipesim validate --backend cuda, every seed schedule on 4 virtual devices (SM
#          partition auto; if the 1f1b probe fails with it, off for all, said in the summary),
#          JSON to validate-NAME.log, report and trace to reports/
#       5. 1f1b with the 4 devices sharing all SMs (--sm-partition off), and on 1 and 2 devices
#       6. gpt-small and gpt3-1.3b: a profile each, then 1f1b, chimera, amp and amdp
#       writes logs and reports to OUT_DIR, summary.txt last, and gpu-check.tar.gz of it all.
# Every step runs under `timeout`; the whole run stays under DEADLINE_S (default 420 s):
# later steps are skipped, and said so, when the time is spent.
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
        -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" \
        -DCMAKE_MODULE_LINKER_FLAGS="-static-libstdc++ -static-libgcc"
  tests=$(cd tests && ls *_cuda_test.cpp | sed 's/\.cpp$//')
  cmake --build "$build" -j "${JOBS:-2}" --target pipesim pipesim_cuda_plugin $tests
  rm -rf "$bin" && mkdir -p "$bin"
  cp "$build/tools/pipesim" "$bin/"
  cp "$build"/lib*/pipesim/libpipesim_cuda.so "$bin/"  # the CUDA plugin, found next to the binaries
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
DEADLINE_S=${DEADLINE_S:-420}
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
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  if ((rc == 124 || rc == 137)); then note "$name: TIMEOUT after ${limit}s"
  elif ((rc == 0)); then note "$name: ok ($((SECONDS - t0)) s)"
  else note "$name: FAILED (exit $rc, see $name.log)"; fi
  return $rc
}

# The CUDA libraries: the toolkit's, else the pip wheels' (nvidia-cublas, nvidia-cuda-runtime).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, q, "lib") for p in nvidia.__path__ for q in ("cublas", "cuda_runtime")))' 2>/dev/null); do
  [[ -d $d ]] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

{
  echo "date: $(date -u)"; echo "host: $(uname -a)"; echo "cpus: $(nproc)"
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

# 2. CUDA kernel and executor tests: a GPU is required here, so a skip fails.
for t in "$bin"/*_cuda_test; do
  name=$(basename "$t")
  PIPESIM_REQUIRE_GPU=1 step "$name" 150 "$t" --gtest_output="xml:$out/$name.xml"
done

# 3. Profiles of gpt-tiny: as one of 4 virtual devices (1/4 of the SMs, wall clock: what the
# executor measures), on the whole GPU (wall), and GPU time alone (events) for comparison.
profile() {  # profile STEP_NAME MODEL FLAGS... (--clock wall unless FLAGS give a clock)
  local name=$1 model=$2; shift 2
  local clock=(--clock wall); [[ " $* " == *" --clock "* ]] && clock=()
  step "$name" 120 "$ps" profile --backend cuda --model "$model" --repeats 10 --warmup 3 --out "$out/$name.json" \
    "${clock[@]}" "$@"
}
profile=$out/profile-cuda.json
if ! profile profile-cuda gpt-tiny --micro-batch-sizes 1,2 --virtual-devices 4; then
  profile=$out/profile-cuda-whole.json
  note "profile: no profile on 1/4 of the SMs; validation predicts with the whole GPU's"
fi
profile profile-cuda-whole gpt-tiny --micro-batch-sizes 1,2
profile profile-cuda-events gpt-tiny --micro-batch-sizes 1,2 --clock events

# 4. Every seed schedule: predicted (profile) against measured (CUDA executor), 4 virtual devices.
validate() {  # validate STEP_NAME SCHEDULE [FLAGS...] (-p 4 unless FLAGS give -p)
  local name=$1 s=$2; shift 2
  local devices=(-p 4); [[ " $* " == *" -p "* ]] && devices=()
  step "$name" 90 "$ps" validate --backend cuda --schedule "$s" "${devices[@]}" --iterations 2 --timeout 60s \
    --report "$out/reports/$name.html" --json "$@"
}
partition=auto
if ! validate validate-probe 1f1b --cost "$profile"; then
  if validate validate-probe-shared 1f1b --sm-partition off --cost "$out/profile-cuda-whole.json"; then
    partition=off
    profile=$out/profile-cuda-whole.json
    note "validate: 1f1b fails with SM partitions (see validate-probe.log) and runs without: all schedules use --sm-partition off"
  fi
fi
grep -h "virtual devices" "$out"/validate-probe*.log 2>/dev/null | head -1 | sed 's/^/SM partition: /' >> "$out/partition.txt"
schedules=(gpipe 1f1b interleaved zb-h1 zb-h2 chimera pipedream pipedream-2bw async-1f1b amp amdp dualpipe dualpipev)
for s in "${schedules[@]}"; do
  validate "validate-$s" "$s" --sm-partition "$partition" --cost "$profile" --trace "$out/reports/validate-$s.trace.json"
done

# 5. The same 1f1b with the 4 devices sharing every SM (predicted from the whole GPU's profile),
# and on one device alone (no neighbours launching kernels beside it) and on two.
[[ $partition == auto ]] && validate validate-1f1b-shared 1f1b --sm-partition off --cost "$out/profile-cuda-whole.json"
validate validate-1f1b-alone 1f1b -p 1 --cost "$out/profile-cuda-whole.json"
validate validate-1f1b-two 1f1b -p 2 --sm-partition off --cost "$out/profile-cuda-whole.json"

# 6. Wider models, 1/4 of the SMs per device: gpt-small (h 256), then gpt3-1.3b (h 2048, seq 2048).
for m in gpt-small:1,2 gpt3-1.3b:1; do
  model=${m%%:*}
  [[ $partition == auto ]] && split=(--virtual-devices 4) || split=()
  if profile "profile-cuda-$model" "$model" --micro-batch-sizes "${m#*:}" "${split[@]}"; then
    for s in 1f1b chimera amp amdp; do
      validate "validate-$model-$s" "$s" --model "$model" --sm-partition "$partition" --cost "$out/profile-cuda-$model.json"
    done
  fi
done

{ echo "gpu-check $(date -u), ${SECONDS}s"; cat "$out/partition.txt" 2>/dev/null; printf '%s\n' "${summary[@]}"; } > "$out/summary.txt"
tar -czf "$out/gpu-check.tar.gz" -C "$out" --exclude gpu-check.tar.gz . 2>/dev/null
cat "$out/summary.txt"
grep -qE 'FAILED|TIMEOUT|missing|no binaries' "$out/summary.txt" && exit 1
exit 0
