# The single stage of scripts/gpu-check (sourced by it; not run on its own): the most evidence one
# device call of about nine minutes can bring back from a bare GPU machine. Steps in order of value
# per second, each under a cap of its own and never past the budget: the machine, unpack and
# configure, the GPU targets only, the kernel suite, one real epoch (the reference run), gpulab
# against PyTorch eager, the other CUDA suites, NVML, the GPU tests of two CPU suites, logical GPUs,
# GPU ranks under MPI, racecheck, then memcheck with whatever time is left.
#
# $OUT never holds more than SINGLE_MAX_FILES files and no folder: the logs live in $WORK and
# travel as one tarball, packed again after every step, so a call killed at its limit still
# returns what finished. With --dry-run, on a machine without a GPU, every step is walked against
# an existing build: what needs no GPU runs (the machine, the build's targets, the libraries they
# load, `gpulab-cli devices`, the packing), each GPU step says "not run: no GPU" with the tests it
# would run (an empty test filter fails the walk), and nothing is built.

SINGLE_MAX_FILES=7
# The targets the GPU steps run; nothing else is built.
SINGLE_TARGETS=(gpulab-cli gpulab-bench-epoch test_kernels_cuda test_cuda_backend
  test_cuda_data_parallel test_nvml test_labs test_inside)
DRY_FAILED=()

# Packs $WORK/logs into $OUT/logs.tar.gz (through a temporary file and a rename, so a kill never
# leaves half a tarball) and checks the file limit.
pack_logs() {
  tar czf "$WORK/logs.tar.gz" -C "$WORK" logs 2>/dev/null || return 0
  cp -f "$WORK/logs.tar.gz" "$OUT/logs.tar.gz.part" && mv -f "$OUT/logs.tar.gz.part" "$OUT/logs.tar.gz"
  local files
  files=$(find "$OUT" -mindepth 1 | wc -l)
  ((files <= SINGLE_MAX_FILES)) || say "TOO MANY FILES in the results folder: $files, the limit is $SINGLE_MAX_FILES"
}

# timed NAME CAP COMMAND...: COMMAND as one step (logs/NAME.log), one verdict line with its exit
# status, time, cap and the log's last line; the logs packed again.
timed() {
  local name=$1 cap=$2 rc=0 started
  shift 2
  started=$(date +%s)
  step "$cap" "$LOGS/$name.log" "$@" || rc=$?
  if ((rc == 0)); then
    say "$name: pass after $(($(date +%s) - started))s (cap ${cap}s): $(tail -n 1 "$LOGS/$name.log" 2>/dev/null | cut -c1-160)"
  elif ((rc != 124)) || [[ -f $LOGS/$name.log ]]; then
    say "$name: FAILED (exit $rc after $(($(date +%s) - started))s, cap ${cap}s): $(tail -n 1 "$LOGS/$name.log" 2>/dev/null | cut -c1-160)"
  fi
  pack_logs
  return $rc
}

# not_run NAME CAP WHAT: a GPU step in a dry run (CAP in seconds, or words).
not_run() {
  local cap=$2
  [[ ! $cap =~ ^[0-9]+$ ]] || cap="${cap}s"
  say "$1: not run: no GPU (dry run; cap $cap): $3"
}

# single_suite LABEL CAP PROGRAM [FILTER]: a CUDA suite under the GPU verdict (a skip other than a
# no-GPU or two-GPU check fails it). In a dry run: the tests the filter picks from the built
# program, and a walk that fails when it picks none.
single_suite() {
  local label=$1 cap=$2 program=$3 filter=${4:-*} count
  if ((DRY_RUN)); then
    if [[ ! -x $BUILD/tests/$program ]]; then
      not_run "$label" "$cap" "$program is not in this build (no CUDA here); the GPU machine builds it"
      return 0
    fi
    count=$(timeout 30 "$BUILD/tests/$program" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null |
      grep -c '^  ' || true)
    if ((count == 0)); then
      say "$label: WOULD FAIL: the filter $filter picks no test of $program"
      DRY_FAILED+=("$label")
    else
      not_run "$label" "$cap" "$count tests of $program ($filter)"
    fi
    return 0
  fi
  SUITE_FLAGS=(--expected-skips "$EXPECTED_SKIPS" --slowest 5)
  suite "$label" "$cap" "$program" --gtest_filter="$filter" || GPU_FAILED+=("$label")
  pack_logs
}

# The machine in $OUT/machine.txt: GPU, driver, CUDA, cuBLAS, torch, the commit and the command.
single_machine() {
  {
    echo "command: bash scripts/gpu-check ${ARGS[*]}"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit: $(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo 'not a git checkout')" \
      "$(git -C "$REPO" status --porcelain 2>/dev/null | grep -q . && echo '(with changes)')"
    echo "--- GPU"
    timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,persistence_mode \
      --format=csv 2>&1 || echo "nvidia-smi: not installed or failed"
    timeout 20 nvidia-smi 2>&1 | head -20
    echo "--- CUDA"
    timeout 20 nvcc --version 2>&1 | tail -2
    ls -l /usr/local/cuda/lib64/libcublas*.so* 2>&1
    command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>&1
    echo "--- torch"
    timeout 60 python3 -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU")' 2>&1 | tail -1
    echo "--- host"
    echo "cores: $(nproc)"
    free -g 2>&1 | head -2
    grep -E '^PRETTY_NAME' /etc/os-release 2>&1
    timeout 10 g++ --version 2>&1 | head -1
    timeout 10 cmake --version 2>&1 | head -1
    echo "ninja $(timeout 10 ninja --version 2>&1)"
    ldconfig -p 2>/dev/null | grep -E 'libudev\.so\.1 |libatomic\.so\.1 |libnvidia-ml\.so\.1 |libcuda\.so\.1 '
  } >"$OUT/machine.txt" 2>&1
  local gpu
  gpu=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    head -1 || true)
  say "machine: ${gpu:-no GPU listed by nvidia-smi}; CUDA $(grep -m1 -oE 'release [0-9.]+' "$OUT/machine.txt" ||
    echo 'no nvcc'); cuBLAS: $(cd /usr/local/cuda/lib64 2>/dev/null && echo libcublas*.so.* || echo none);" \
    "$(grep -m1 '^torch' "$OUT/machine.txt" || echo 'no torch'); $(nproc) cores (machine.txt)"
}

# The build: unpack, configure and build the GPU targets; in a dry run, which of them this build has.
single_build() {
  if ((DRY_RUN)); then
    say "configure: not run (dry run): walks the build at $BUILD"
    local target missing=() path
    for target in "${SINGLE_TARGETS[@]}"; do
      case $target in
        gpulab-cli) path=$BUILD/app/gpulab-cli ;;
        gpulab-bench-epoch) path=$BUILD/bench/gpulab-bench-epoch ;;
        *) path=$BUILD/tests/$target ;;
      esac
      [[ -x $path ]] || missing+=("$target")
    done
    say "build: not run (dry run): $((${#SINGLE_TARGETS[@]} - ${#missing[@]})) of" \
      "${#SINGLE_TARGETS[@]} GPU targets in $BUILD${missing[*]:+; not built here: ${missing[*]}}"
    [[ -x $BUILD/app/gpulab-cli ]] || { say "build: WOULD FAIL: no $BUILD/app/gpulab-cli"; return 1; }
    return 0
  fi
  local started
  started=$(date +%s)
  if ! configure; then
    GPU_FAILED+=(configure)
    pack_logs
    return 1
  fi
  say "configure: pass after $(($(date +%s) - started))s (unpack and configure; logs/configure.log)"
  pack_logs
  if ! build 240 "${SINGLE_TARGETS[@]}"; then
    GPU_FAILED+=(build)
    pack_logs
    return 1
  fi
  pack_logs
}

# One epoch of pytorch-example on cuda:0 with telemetry and its weights: the reference run. Once
# more with CUDA graphs off only when it fails, which the summary says.
single_epoch() {
  local run=$WORK/run-cuda0 common
  common=(train --device cuda:0 --model pytorch-example --epochs 1 --data-dir "$DATA"
    --out "$run" --save "$run/weights.safetensors" --quiet)
  if ((DRY_RUN)); then
    not_run epoch 100 "gpulab-cli ${common[*]}"
    not_run telemetry 5 "NVML's samples of cuda:0 in that run"
    return 0
  fi
  if ! timed epoch 100 "${WITH_LIBS[@]}" "$BUILD/app/gpulab-cli" "${common[@]}"; then
    rm -rf "$run"
    GPU_FAILED+=(epoch)
    say "epoch: once more with --cuda-graph off, because it failed with CUDA graphs on"
    timed epoch-graphs-off 80 "${WITH_LIBS[@]}" "$BUILD/app/gpulab-cli" "${common[@]}" \
      --cuda-graph off || true
  fi
  [[ -f $run/run.json ]] || return 0
  "${REPORT[@]}" telemetry "$run" cuda:0 | say_lines || GPU_FAILED+=(telemetry)
  cp -f "$run/run.json" "$OUT/run-cuda.json"
  tar czf "$WORK/reference-run-cuda0.tar.gz" -C "$WORK" run-cuda0 &&
    mv -f "$WORK/reference-run-cuda0.tar.gz" "$OUT/reference-run-cuda0.tar.gz"
  say "epoch: the run folder (run.json, metrics.csv, eval.csv, telemetry.csv, weights) is in" \
    "reference-run-cuda0.tar.gz"
  pack_logs
}

# gpulab (CUDA graphs on) against PyTorch eager, fp32, batch 64 and 512, one round, same GPU. No
# WITH_LIBS: python3 and torch must not load the unpacked Debian libraries; gpulab's programs find
# them through DT_RPATH.
single_bench() {
  local args=(--data-dir "$DATA" --rounds 1 --batches "64 512" --precisions fp32 --cuda-graph on
    --conv "im2col implicit" --pytorch eager --out "$OUT/gpu_vs_pytorch.json")
  if ((DRY_RUN)); then
    not_run gpu_vs_pytorch 110 "bench/gpu_vs_pytorch ${args[*]}"
    return 0
  fi
  timed gpu_vs_pytorch 110 env PYTHON=python3 GPULAB_BUILD_DIR="$BUILD" \
    bash "$REPO/bench/gpu_vs_pytorch" "${args[@]}" --budget 95 || GPU_FAILED+=(gpu_vs_pytorch)
  grep -sE '^(batch|round .*: (skipped|did not finish|failed with|ended without))' \
    "$LOGS/gpu_vs_pytorch.log" | sed 's/^/  /' | say_lines || true
}

# compute-sanitizer with what is left: racecheck over the reductions, the loss and the
# implicit-GEMM convolution's shared-memory tiles, then memcheck over the kernel suite (cuBLAS's
# own GEMMs make it slow: it gets the rest of the budget) and the implicit convolution's tests
# of small shapes.
single_sanitizers() {
  local racecheck='CudaOps.RowAndColumnSums*:CudaOps.SoftmaxCrossEntropy*:CudaImplicitConv.SanitizerShapes'
  local memcheck='CudaImplicitConv.SanitizerShapes:CudaImplicitConv.TheWeightGradient*:CudaImplicitConv.GradientsNotAskedFor*:CudaOps.*:-CudaOps.ReducedPrecision*'
  if ((DRY_RUN)); then
    single_suite racecheck 60 test_kernels_cuda "$racecheck"
    single_suite memcheck "what is left" test_kernels_cuda "$memcheck"
    return 0
  fi
  sanitize racecheck racecheck 60 "$BUILD/tests/test_kernels_cuda" --gtest_filter="$racecheck" ||
    GPU_FAILED+=(racecheck)
  pack_logs
  # memcheck has the rest: too little left is said, not failed; cut at the budget, it fails only
  # on an error it found before the cut (its log names each).
  local rest=$(($(left) - 10)) log="$LOGS/memcheck.log"
  if ((rest < 30)); then
    say "memcheck: not run: ${rest}s left in the budget"
  elif ! sanitize memcheck memcheck "$rest" "$BUILD/tests/test_kernels_cuda" --gtest_filter="$memcheck"; then
    if (($(left) <= 12)) && ! grep -q 'ERROR SUMMARY' "$log" 2>/dev/null &&
      ! grep -qE '^========= +(Invalid|Program hit|Error)' "$log" 2>/dev/null; then
      say "memcheck: cut at the budget after $(grep -c '^\[       OK \]' "$log" 2>/dev/null || echo 0) tests with no error found"
    else
      GPU_FAILED+=(memcheck)
    fi
  fi
  pack_logs
}

run_single() {
  single_machine
  pack_logs
  if ((DRY_RUN)); then
    say "dry run: every step is walked against the build at $BUILD; nothing is built and no GPU step runs"
  else
    gpu_present || return 3
  fi
  single_build || return 1
  "${WITH_LIBS[@]}" ldd "$BUILD/app/gpulab-cli" "$BUILD"/tests/test_cuda_backend 2>/dev/null |
    grep -i 'not found' | sort -u | sed 's/^/MISSING LIBRARY: /' | say_lines || true
  timed devices 20 "${WITH_LIBS[@]}" "$BUILD/app/gpulab-cli" devices || ((DRY_RUN)) ||
    GPU_FAILED+=(devices)
  sed 's/^/  /' "$LOGS/devices.log" 2>/dev/null | say_lines || true

  # 90: the implicit convolution's tests hold every preset's convolutions at batch 64 to the
  # CPU reference, seconds of CPU.
  single_suite kernels 90 test_kernels_cuda
  single_epoch
  single_bench
  # The deliberate device fault in a process of its own: after it, nothing else in that process
  # may use the GPU until the backend has reset it.
  single_suite backend 150 test_cuda_backend '-*Fault*'
  single_suite backend-fault 45 test_cuda_backend '*Fault*'
  single_suite nvml 30 test_nvml
  single_suite labs-gpu 30 test_labs 'Labs.MatmulOnAGpu*'
  single_suite inside-gpu 30 test_inside 'InferenceTiming.AGpuIsTimed*'
  single_suite data-parallel 150 test_cuda_data_parallel '-CudaMpiRanksTest.*'
  ((DRY_RUN)) || say "MPI: mpirun: $(command -v mpirun || echo 'none: the GPU-ranks tests skip, and fail the stage')"
  single_suite mpi-ranks 75 test_cuda_data_parallel 'CudaMpiRanksTest.*'
  single_sanitizers

  if ((DRY_RUN)); then
    ((${#DRY_FAILED[@]} == 0)) || { say "dry run: WOULD FAIL: ${DRY_FAILED[*]}"; return 1; }
    say "dry run: every step walked"
    return 0
  fi
  if ((${#GPU_FAILED[@]} == 0)); then
    say "GPU verdict: pass"
  else
    say "GPU verdict: FAILED: ${GPU_FAILED[*]}"
    return 1
  fi
}
