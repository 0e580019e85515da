#!/usr/bin/env bash
# Builds stepcast-harness on a bare CUDA machine (toolkit + CMake + g++; no -dev packages), runs
# the selftest, then a calibration set sized to finish in about 8 minutes on one H200, and
# leaves every measurement file, log and a summary in the output directory.
#
#   tests/device/run.sh [PHASE] [OUT_DIR]
#
# PHASE: all (default) = build, selftest, calibrate; or one of build | selftest | calibrate | smoke
#   (smoke: selftest plus every suite on its --quick grid, about a minute).
# OUT_DIR: default $OUT when set (the device runner's output folder), else ./device-out.
# Environment:
#   STEPCAST_CALIBRATION_SECONDS  total --max-wall budget of the calibration suites (default 480);
#                                 each suite gets a fixed share of it
#   STEPCAST_PACK=FILE.tgz        at the end, archive the whole output folder into FILE.tgz
#   STEPCAST_SMOKE_FIRST=1        in `all`, run every suite's --quick grid before calibrating, so
#                                 every kernel's result check runs even if a budget cuts a grid
#   CUDA_HOME, CUDNN_ROOT, NCCL_ROOT, CMAKE_CUDA_ARCHITECTURES  override what is detected
#
# Exit status: 0 when the build, the selftest and every suite succeeded; otherwise the first
# failure's status (the other phases still run, so one window on a GPU yields everything it can).
# Files measured after a failed selftest are kept but marked DO-NOT-COMMIT in SUMMARY.txt.
set -uo pipefail

phase=${1:-all}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${2:-${OUT:-$root/device-out}}
build=${STEPCAST_DEVICE_BUILD:-$root/build-device}
budget=${STEPCAST_CALIBRATION_SECONDS:-480}
mkdir -p "$out"
status=0

log() { echo "[run.sh $(date +%H:%M:%S)] $*" | tee -a "$out/run.log"; }
fail() {  # fail STATUS MESSAGE: remember the first failure, keep going
  log "FAILED: $2 (status $1)"
  [ "$status" -eq 0 ] && status=$1
  return 0
}

case "$phase" in
  all|build|selftest|calibrate|smoke) ;;
  *) echo "usage: $0 [all|build|selftest|calibrate|smoke] [OUT_DIR]" >&2; exit 2 ;;
esac

# --- The machine ----------------------------------------------------------------------------------
describe_machine() {
  log "host $(hostname), $(nproc) cores, phase $phase, output $out"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv 2>&1 | tee -a "$out/run.log"
    nvidia-smi -q -d CLOCK,PERFORMANCE,ECC > "$out/nvidia-smi-q.txt" 2>&1 || true
  else
    log "nvidia-smi not found"
  fi
}

gpu_count() {
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L 2>/dev/null | grep -c '^GPU' ; else echo 0; fi
}

# The GPU's architecture (9.0 -> 90) so only it is compiled.
detect_arch() {
  if [ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]; then echo "$CMAKE_CUDA_ARCHITECTURES"; return; fi
  local cc
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  if [ -n "$cc" ]; then echo "$cc"; else echo "80;89;90"; fi
}

# Headers and libraries of a pip wheel (nvidia-cudnn-cu12, nvidia-nccl-cu12) carry only versioned
# .so names; give CMake a prefix with the unversioned link name.
wheel_prefix() {  # wheel_prefix MODULE LIBNAME
  local python dir
  python=$(command -v python3 || true)
  [ -z "$python" ] && return 1
  dir=$("$python" -c "import importlib.util, os; s = importlib.util.find_spec('nvidia.$1'); print(os.path.dirname(s.origin) if s and s.origin else (list(s.submodule_search_locations)[0] if s else ''))" 2>/dev/null)
  [ -z "$dir" ] || [ ! -d "$dir/include" ] && return 1
  local so
  so=$(find "$dir/lib" -maxdepth 1 -name "lib$2.so*" 2>/dev/null | sort | head -1)
  [ -z "$so" ] && return 1
  mkdir -p "$build/deps/$1/lib"
  ln -sf "$dir/include" "$build/deps/$1/include"
  ln -sf "$so" "$build/deps/$1/lib/lib$2.so"
  export LD_LIBRARY_PATH="$dir/lib:${LD_LIBRARY_PATH:-}"
  echo "$build/deps/$1"
}

# --- Build ----------------------------------------------------------------------------------------
do_build() {
  local cuda=${CUDA_HOME:-/usr/local/cuda}
  local nvcc=${CUDACXX:-$cuda/bin/nvcc}
  [ -x "$nvcc" ] || nvcc=$(command -v nvcc || true)
  if [ -z "$nvcc" ]; then fail 3 "no nvcc (set CUDA_HOME or CUDACXX)"; return; fi
  if ! command -v cmake >/dev/null 2>&1; then fail 3 "no cmake on PATH"; return; fi
  local cmake_version
  cmake_version=$(cmake --version | head -1 | awk '{print $3}')
  if [ "$(printf '%s\n3.18\n' "$cmake_version" | sort -V | head -1)" != "3.18" ]; then
    fail 3 "cmake $cmake_version is older than 3.18"; return
  fi
  local generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  local arch
  arch=$(detect_arch)
  local extra=()
  if [ -z "${CUDNN_ROOT:-}" ] && [ ! -e "$cuda/include/cudnn.h" ] && [ ! -e /usr/include/cudnn.h ] \
     && [ ! -e /usr/include/x86_64-linux-gnu/cudnn.h ]; then
    local p; p=$(wheel_prefix cudnn cudnn) && extra+=(-DCUDNN_ROOT="$p") && log "cuDNN from the Python wheel at $p"
  fi
  if [ -z "${NCCL_ROOT:-}" ] && [ ! -e "$cuda/include/nccl.h" ] && [ ! -e /usr/include/nccl.h ]; then
    local p; p=$(wheel_prefix nccl nccl) && extra+=(-DNCCL_ROOT="$p") && log "NCCL from the Python wheel at $p"
  fi
  local sha
  sha=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || cat "$root/.git-sha" 2>/dev/null || echo unknown)
  log "configuring: cmake $cmake_version, nvcc $nvcc, sm_$arch, git $sha"
  local t0=$SECONDS
  if ! cmake -S "$root/tests/device" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DSTEPCAST_GIT_SHA="$sha" \
       ${CUDNN_ROOT:+-DCUDNN_ROOT="$CUDNN_ROOT"} ${NCCL_ROOT:+-DNCCL_ROOT="$NCCL_ROOT"} "${extra[@]}" \
       > "$out/configure.log" 2>&1; then
    tail -30 "$out/configure.log"; fail 3 "configure (see configure.log)"; return
  fi
  grep -E '^ \* WITH_' "$out/configure.log" | tee -a "$out/run.log"
  if ! cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1; then
    grep -E 'error' "$out/build.log" | head -30; fail 3 "build (see build.log)"; return
  fi
  log "built in $((SECONDS - t0)) s: $build/bin/stepcast-harness"
}

# run_suite NAME TIMEOUT_S ARGS...: one suite in its own process (a CUDA error cannot spoil the
# next), output file NAME.json, console copy NAME.log.
run_suite() {
  local name=$1 limit=$2
  shift 2
  log "$name: stepcast-harness $* (limit ${limit} s)"
  local t0=$SECONDS
  timeout --signal=INT --kill-after=20 "$limit" "$build/bin/stepcast-harness" "$@" --out "$out/$name.json" \
    > "$out/$name.log" 2>&1
  local rc=$?
  tail -3 "$out/$name.log" | sed 's/^/    /' | tee -a "$out/run.log"
  log "$name: exit $rc after $((SECONDS - t0)) s"
  case $rc in
    0) ;;
    77) log "$name: skipped (no GPU visible)" ;;
    124|130|137) fail $rc "$name hit the ${limit} s limit" ;;
    *) fail $rc "$name" ;;
  esac
  return $rc
}

selftest_ok=unknown
do_selftest() {
  if [ ! -x "$build/bin/stepcast-harness" ]; then fail 3 "no harness binary; run the build phase"; return; fi
  run_suite selftest 180 selftest
  case $? in
    0) selftest_ok=yes ;;
    77) selftest_ok=skipped ;;
    *) selftest_ok=no ;;
  esac
}

# Shares of the calibration budget (sum 1.0): GEMMs take most, then attention.
do_calibrate() {
  if [ ! -x "$build/bin/stepcast-harness" ]; then fail 3 "no harness binary; run the build phase"; return; fi
  local share
  # Shorter than nvbench's defaults (0.5 s, 15 s) so the whole grid fits the budget: 0.05 s of
  # measured time and at most 2000 samples per point still give a 0.5% median on a 3 us GEMM
  # sampled cold; microsecond kernels are measured hot as well.
  local common=(--min-time 0.05 --timeout 2 --max-samples 2000)
  # Attention runs as two processes: forward and decode, then every backward point (cuDNN's SDPA
  # backward among them), so a failure in the backward cannot lose the forward measurements.
  for entry in gemm:0.45 attention:0.10 attention-backward:0.12 elementwise:0.15 memory:0.08 collectives:0.10; do
    local suite=${entry%%:*}
    share=${entry##*:}
    local wall
    wall=$(awk -v b="$budget" -v s="$share" 'BEGIN { printf "%d", b * s }')
    if [ "$suite" = collectives ] && [ "$(gpu_count)" -lt 2 ]; then
      log "collectives: skipped, one GPU on this machine (NCCL needs two ranks)"
      continue
    fi
    local extra=()
    local command=$suite
    [ "$suite" = collectives ] && extra=(--sizes 1K:1G:4)
    [ "$suite" = attention ] && extra=(--ops forward,decode)
    [ "$suite" = attention-backward ] && command=attention && extra=(--ops backward)
    run_suite "$suite" $((wall + 90)) "$command" "${common[@]}" --max-wall "$wall" "${extra[@]}"
  done
}

do_smoke_suites() {
  if [ ! -x "$build/bin/stepcast-harness" ]; then fail 3 "no harness binary; run the build phase"; return; fi
  for suite in gemm attention attention-backward elementwise memory collectives; do
    if [ "$suite" = collectives ] && [ "$(gpu_count)" -lt 2 ]; then continue; fi
    local command=$suite extra=()
    [ "$suite" = attention ] && extra=(--ops forward,decode)
    [ "$suite" = attention-backward ] && command=attention && extra=(--ops backward)
    run_suite "smoke-$suite" 180 "$command" --quick --min-time 0.05 --timeout 1 "${extra[@]}"
  done
}

summarize() {
  {
    echo "stepcast-harness device run, $(date -u +%Y-%m-%dT%H:%M:%SZ), phase $phase, status $status"
    echo "selftest: $selftest_ok"
    if [ "$selftest_ok" = no ]; then
      echo "DO-NOT-COMMIT: the selftest failed, so these measurements are not trustworthy."
    fi
    local gpu
    gpu=$(grep -h -m1 '"catalog_gpu"' "$out"/*.json 2>/dev/null | head -1 | sed 's/.*: *"\{0,1\}\([^",]*\)"\{0,1\},*/\1/')
    echo "catalog GPU: ${gpu:-unknown}"
    echo "commit under: scenarios/calibration/${gpu:-<gpu>}/ (exactly as written, with SUMMARY.txt)"
    # Measured points carry a median, skipped ones a reason (both have a "kind").
    for f in "$out"/*.json; do
      [ -e "$f" ] || continue
      echo "  $(basename "$f"): $(grep -c '"median_s"' "$f") measured, $(grep -c '"reason"' "$f") skipped," \
           "$(grep -c '"passed": false' "$f") failed checks, complete $(grep -m1 '"complete"' "$f" | tr -d ' ,')"
    done
    # Which cuBLASLt FP8 set-up ran (validation/fp8_gemm_configurations.h), per measured record.
    if grep -qh 'cuBLASLt FP8 set-up' "$out"/*.json 2>/dev/null; then
      echo "FP8 GEMM set-ups that ran (records):"
      grep -oh 'cuBLASLt FP8 set-up [0-9]* of [0-9]* tried: [^"]*' "$out"/*.json | sort | uniq -c | sed 's/^/  /'
    fi
  } > "$out/SUMMARY.txt"
  tee -a "$out/run.log" < "$out/SUMMARY.txt"
}

describe_machine
case "$phase" in
  all)
    do_build
    do_selftest
    [ "${STEPCAST_SMOKE_FIRST:-0}" = 1 ] && do_smoke_suites
    do_calibrate
    ;;
  build) do_build ;;
  selftest) do_selftest ;;
  calibrate) do_calibrate ;;
  smoke) do_selftest; do_smoke_suites ;;
esac
summarize
# One archive of the whole output folder (a remote runner that returns only a few files, e.g. at
# most 8: STEPCAST_PACK=$OUT/device-run.tgz tests/device/run.sh all /tmp/device-out).
if [ -n "${STEPCAST_PACK:-}" ]; then
  if tar czf "$STEPCAST_PACK" -C "$(dirname "$out")" "$(basename "$out")"; then
    log "packed $out into $STEPCAST_PACK"
  else
    fail 4 "could not pack $out into $STEPCAST_PACK"
  fi
fi
exit "$status"
