#!/usr/bin/env bash
# The one command that builds and checks the GPU side on a GPU host (H100/H200, sm_90):
#   scripts/gpu-check.sh [STAGE ...]     stages: build tests sanitize validate bench python grid
#                                        (default: all but grid)
# Logs and JSON results go to $OUT (when set) or build-gpu/out. On a host without a
# package registry, first `bash ../shared/tools/device-deps.sh` here and carry .devdeps along.
# Environment: GRID_SAMPLE (validate: paper-grid problems, each on both GPU backends, default 200: 400 took more
#              than 440 s with autotune on, H100),
#              SANITIZE_FILTER (doctest -tc filter for the sanitizer runs), SANITIZE_TIMEOUT (s per tool, 540: memcheck
#              took ~300 s over the whole filter set on an H100, initcheck more than 200 s),
#              SANITIZE_TOOLS (which runs, default "memcheck racecheck initcheck smoke"; smoke = memcheck on
#              `validate --set smoke`), so that the stage can be split over calls with a time limit,
#              RACECHECK_FILTER / RACECHECK_TIMEOUT (racecheck's, 540 s: its whole filter set took more than 390 s on an H100),
#              GRID_SECONDS (grid: stop after this many seconds, 0 = run to the end; call again to resume).
#              BENCH_DEVICE (bench: the folder name of the result files, default the GPU model: h100, h200).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
[ -f .devdeps/env.sh ] && source .devdeps/env.sh
OUT=${OUT:-$ROOT/build-gpu/out}
mkdir -p "$OUT"
B=build-gpu
FC=$B/cli/fftconv
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(build tests sanitize validate bench python)
log() { printf '\n== gpu-check %s: %s\n' "$(date +%T)" "$*"; }
summary="$OUT/gpu-check-summary.txt"
touch "$summary"  # (the last step prints it, whichever stages ran)

stage_build() {
  log "build ($B, sm_90)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$summary"
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON >"$OUT/configure.log" 2>&1 ||
    { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -40; exit 1; }
  echo "build warnings: $(grep -c "warning" "$OUT/build.log" || true)" | tee -a "$summary"
}

stage_tests() {
  log "the doctest programs with GPU suites (each once, every suite) beside ctest's other tests"
  # ctest runs the rest meanwhile at two OpenMP threads a test: eight tests with a team of every
  # core each oversubscribed a 16-core host until an 8x8 run took 150 ms.
  local rc=0 t name
  OMP_NUM_THREADS=2 ctest --test-dir $B -E "install_consumer|gpu_test|bench_test|bench_driver_test" -j 8 \
    --output-on-failure >"$OUT/ctest.log" 2>&1 &
  local ctest_pid=$!
  for t in gpu/gpu_test bench/bench_test bench/bench_driver_test; do
    name=${t#*/}
    $B/$t 2>&1 | tee "$OUT/$name.log" | tail -3 || echo "$name: FAILED" | tee -a "$summary"
    grep -E "test cases|assertions" "$OUT/$name.log" | sed "s/^/$name: /" >>"$summary" || true
  done
  wait $ctest_pid || rc=$?
  grep -E "tests passed|tests failed|\(Failed\)" "$OUT/ctest.log" | sed 's/^/ctest: /' | tee -a "$summary" || true
  [ $rc = 0 ] || echo "ctest: FAILED (exit $rc, see $OUT/ctest.log)" | tee -a "$summary"
}

# sanitize NAME LOG LIMIT TOOL CMD...: compute-sanitizer --tool TOOL on CMD within LIMIT seconds, one summary line.
sanitize() {
  local name=$1 logf=$2 limit=$3 tool=$4 rc=0
  shift 4
  timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" >"$logf" 2>&1 || rc=$?
  if [ $rc = 0 ]; then
    echo "sanitizer $name: clean ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logf" | tail -1))" | tee -a "$summary"
  elif [ $rc = 124 ]; then
    # Out of time is not a finding: say so, and whether the sanitizer reported anything before.
    # (every sanitizer line starts with "========= "; without a report there is only the banner)
    local reports
    reports=$(grep -E "^=========" "$logf" | grep -vc "COMPUTE-SANITIZER" || true)
    echo "sanitizer $name: TIMED OUT after ${limit} s with $reports sanitizer lines before that (raise SANITIZE_TIMEOUT or split SANITIZE_FILTER)" | tee -a "$summary"
    [ "$reports" = 0 ] || grep -E "^=========" "$logf" | head -20
  else
    echo "sanitizer $name: FAILED (exit $rc)" | tee -a "$summary"
    # the sanitizer's reports, then the end of the command's own output (a failed check prints no report)
    grep -E "=========|ERROR" "$logf" | head -20
    tail -20 "$logf"
  fi
}

stage_sanitize() {
  local filter=${SANITIZE_FILTER:-"fill_normal_device*,*callbacks pad*,*in place and leaves*,error_sums_device*,direct64 in chunks*,*typed errors*,*workspace limit*,*user stream*,*corner cases*,*tile plans*,fbfft forward*,fbfft inverse inverts*,*_window*,*family is tuned*,direct64 on*,*launch shapes*,fbfft dependent*,*graph*,*forked transforms*,*breakdown*,*pruned transforms*,*smooth*,*small-K kernels*"}
  local tools=${SANITIZE_TOOLS:-memcheck racecheck initcheck smoke}
  local default_limit=${SANITIZE_TIMEOUT:-540}
  for tool in $tools; do
    case "$tool" in memcheck|racecheck|initcheck) ;; smoke) continue ;;
      *) echo "gpu-check: SANITIZE_TOOLS: unknown tool '$tool' (memcheck racecheck initcheck smoke)" >&2; exit 2 ;; esac
    # racecheck is slow on cuFFT's own kernels: it checks our kernels that use shared memory.
    local f=$filter
    [ "$tool" = racecheck ] && f=${RACECHECK_FILTER:-"error_sums_device*,fbfft forward*,fbfft inverse inverts*,*inverse_window*,*pruned transforms*,*corner cases*,direct64 on*,*launch shapes*,*small-K kernels*"}
    log "compute-sanitizer --tool $tool on gpu_test ($f)"
    # racecheck is the slowest tool: its own time limit (RACECHECK_TIMEOUT).
    local limit=$default_limit
    [ "$tool" = racecheck ] && limit=${RACECHECK_TIMEOUT:-540}
    sanitize "$tool" "$OUT/sanitize-$tool.log" "$limit" "$tool" $B/gpu/gpu_test -ts=gpu -tc="$f"
  done
  case " $tools " in *" smoke "*) ;; *) return 0 ;; esac
  log "validate smoke on the GPU backends under memcheck"
  sanitize "memcheck on validate smoke" "$OUT/smoke-memcheck.log" "$default_limit" memcheck \
    $FC validate --set smoke --backends cufft,fbfft --no-autotune --no-progress --out "$OUT/smoke-memcheck.jsonl"
}

stage_validate() {
  log "validate smoke, torch-parity and random at full speed, then a paper-grid sample"
  local rc=0
  $FC validate --set smoke --backends auto,cufft,fbfft --out "$OUT/smoke.jsonl" --no-progress | tail -12 | tee -a "$summary" || rc=1
  $FC validate --set torch-parity --backends auto,cufft,fbfft --out "$OUT/torch-parity.jsonl" --no-progress | tail -12 |
    tee -a "$summary" || rc=1
  $FC validate --set random --backends auto,cufft,fbfft --out "$OUT/random.jsonl" --no-progress | tail -12 |
    tee -a "$summary" || rc=1
  $FC validate --set paper-grid --sample "${GRID_SAMPLE:-200}" --seed 7 --backends cufft,fbfft --check gpu64 \
    --out "$OUT/grid-sample.jsonl" --no-progress | tail -12 | tee -a "$summary" || rc=1
  [ $rc = 0 ] || echo "validate: FAILURES (see above)" | tee -a "$summary"
}

# The canonical result files of this GPU (bench/results/<device>/<benchmark>.json, docs/results.md) go
# to $OUT/bench/results/<device>/: copy that folder into bench/results/ and run `python3 bench/report.py`.
# <device> is the GPU's model in lower case (h100, h200), or BENCH_DEVICE. Other measurements (block
# shapes, launch modes) stay in $OUT.
stage_bench() {
  local name driver dev R
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
  dev=${BENCH_DEVICE:-$(python3 -c 'import re, sys
m = re.search(r"\b([A-Z]{1,2}[0-9]{2,4}[A-Z]?)\b", sys.argv[1])
print(m.group(1).lower() if m else re.sub(r"[^a-z0-9]+", "_", sys.argv[1].lower()).strip("_"))' "$name")}
  R="$OUT/bench/results/$dev"
  mkdir -p "$R"
  # stamp FILE COMMAND: the date, the command and the driver, where the benchmark does not record them.
  stamp() { python3 bench/report.py stamp "$1" --command "$2" --set "driver_version=$driver"; }
  local set file
  for set in L modern depthwise large; do
    file=layers; [ "$set" = L ] || file=layers_$set
    log "bench layers --set $set (auto, fbfft, cufft vs cuDNN FMA and tensor-op math) -> $R/$file.json"
    # the large set also plans each backend with tile=auto; --resume continues a run cut by a time limit
    local extra=(); [ "$set" = large ] && extra=(--tile auto --repeat 3 --resume)
    $FC bench layers --set $set --backends auto,fbfft,cufft "${extra[@]}" --json "$R/$file.json" 2>&1 |
      tee "$OUT/$file.log" | tail -40
    stamp "$R/$file.json" "fftconv bench layers --set $set --backends auto,fbfft,cufft ${extra[*]}"
  done
  log "bench step (fprop + bprop of L5 at S=2: weight spectra shared vs computed twice)"
  $FC bench step --problem L5,S=2 --backend fbfft --tile auto --repeat 20 --json "$R/step.json" 2>&1 | tail -4
  stamp "$R/step.json" "fftconv bench step --problem L5,S=2 --backend fbfft --tile auto --repeat 20"
  log "bench conv (the paper's fbfft experiment), against the default cufft and the paper's cuFFT pipeline"
  $FC bench conv --json "$R/conv.json" 2>&1 | tee "$OUT/conv.log" | tail -3
  stamp "$R/conv.json" "fftconv bench conv"
  $FC bench conv --baseline-opt max_prime=7 --baseline-opt weights=fft --json "$R/conv_paper_baseline.json" 2>&1 |
    tee "$OUT/conv_paper_baseline.log" | tail -3
  stamp "$R/conv_paper_baseline.json" "fftconv bench conv --baseline-opt max_prime=7 --baseline-opt weights=fft"
  log "CGEMM probe (the layers' products: CgemmStridedBatched vs cublasLt's algorithms)"
  $B/bench/fftconv_cgemm_probe | tee "$OUT/cgemm_probe.txt"
  python3 bench/report.py cgemm-probe "$OUT/cgemm_probe.txt" "$R/cgemm_probe.json" --device "$name" \
    --command "$B/bench/fftconv_cgemm_probe"
  log "bench fft (fbfft vs cuFFT transforms; calls back to back in a CUDA graph, launched dependent and plain, then each call synchronized)"
  local t dl sfx inv dir
  for t in graph calls; do
    dl=(); sfx=""
    [ "$t" = graph ] && dl=(--dependent-launch compare)
    [ "$t" = calls ] && sfx=_calls
    for inv in "" --inverse; do
      dir=forward; [ -n "$inv" ] && dir=inverse
      $FC bench fft --dims 2 --sizes 8,16,32,64,128 --batches 16384,65536 $inv --repeat 50 --timer $t "${dl[@]}" \
        --json "$R/fft2d_$dir$sfx.json" 2>&1 | tail -12
      $FC bench fft --dims 1 --sizes 8,16,32,64,128,256 --batches 16384,65536,262144 $inv --repeat 50 --timer $t "${dl[@]}" \
        --json "$R/fft1d_$dir$sfx.json" 2>&1 | tail -19
    done
  done
  log "bench fft over batch sizes (the paper's Figures 7-8), the smooth 2-D sizes and the Stockham sizes"
  local smooth=6,8,10,12,14,16,18,20,24,28,30,32,36,40,42,48,50,54,56,60,64,72,80,84,96,100,108,112,120,128
  local st2=9,15,21,25,27,35,45,49,63,70,75,81,90,98,105,125,126 rects=42x54,45x128,60x64,100x120,27x81,7x128,128x15
  for inv in "" --inverse; do
    dir=forward; [ -n "$inv" ] && dir=inverse
    $FC bench fft --dims 2 --sizes 8,16,32,64,128 --batches 16,64,256,1024,16384,16389,65536 $inv --repeat 20 \
      --timer graph --json "$R/fft2d_batches_$dir.json" 2>&1 | tail -3
    $FC bench fft --dims 1 --sizes 8,16,32,64,128,256 --batches 16,64,256,1024,16384,16389,65536 $inv --repeat 20 \
      --timer graph --json "$R/fft1d_batches_$dir.json" 2>&1 | tail -3
    $FC bench fft --dims 2 --sizes $smooth --batches 4096,16384 $inv --repeat 50 --timer graph \
      --json "$R/fft2d_smooth_$dir.json" 2>&1 | tail -3
    $FC bench fft --dims 2 --sizes $st2 --rects $rects --batches 4096,16384 $inv --repeat 30 --timer graph \
      --json "$R/fft2d_stockham_$dir.json" 2>&1 | tail -3
    $FC bench fft --dims 1 --sizes 6,12,24,48,96,100,120,125,192,243,250 --batches 16384,65536 $inv --repeat 30 \
      --timer graph --json "$R/fft1d_stockham_$dir.json" 2>&1 | tail -3
  done
  for f in "$R"/fft*.json; do stamp "$f" "fftconv bench fft"; done
  log "bench conv, fbfft's transforms launched dependent vs plain (Note [dependent launch])"
  $FC bench conv --baseline fbfft --baseline-opt launch=plain --json "$OUT/conv_dependent_vs_plain.json" 2>&1 | tail -2
  log "bench fft 1-D block shapes (Note [1-D block shapes]; graph timer)"
  for inv in "" --inverse; do
    $FC bench fft --dims 1 --sizes 8,16,32 --batches 16384,65536,262144 $inv --timer graph \
      --shapes-1d plain prefetch fill prefetch,fill prefetch,fill,groups=2 --json "$OUT/fft1d_shapes_small${inv:+_inv}.json" 2>&1 | tail -9
    $FC bench fft --dims 1 --sizes 64,128,256 --batches 16384,65536,262144 $inv --timer graph \
      --shapes-1d plain pairs=8 pairs=16 prefetch pairs=8,prefetch pairs=16,prefetch --json "$OUT/fft1d_shapes_four${inv:+_inv}.json" 2>&1 | tail -9
  done
  log "canonical result files in $R (copy them into bench/results/$dev/, then python3 bench/report.py)"
  ls "$R"
}

stage_grid() {
  # The whole paper-grid (8,232 problems x 3 passes + the adjoint) on every GPU backend, one shard per
  # GPU of this host (LOCAL_RANK selects the device). Records accumulate in $B/grid, which survives
  # between calls while the machine is warm; a run stopped at GRID_SECONDS continues where it stopped
  # when called again (--resume). Everything goes to $OUT as one archive after each call.
  local n dir=$B/grid secs=${GRID_SECONDS:-0} i
  n=$(nvidia-smi -L | wc -l)
  mkdir -p "$dir"
  log "paper-grid on $n GPU(s), cufft and fbfft, untuned plans, ${secs}s budget (0 = to the end)"
  echo "$(date +%s) start $n GPUs budget ${secs}s" >>"$dir/wall.log"
  local threads=$(($(nproc) / n))
  for ((i = 0; i < n; i++)); do
    OMP_NUM_THREADS=$threads LOCAL_RANK=$i timeout "${secs}" $FC validate --set paper-grid --backends cufft,fbfft --no-autotune \
      --shard "$i/$n" --resume --out "$dir/grid-$i.jsonl" >>"$dir/grid-$i.log" 2>&1 &
  done
  local rc=0
  for ((i = 0; i < n; i++)); do wait -n || rc=$?; done
  echo "$(date +%s) stop rc=$rc" >>"$dir/wall.log"
  $FC validate merge "$dir/paper-grid.md" "$dir"/grid-*.jsonl | tail -12 | tee -a "$summary" || true
  grep -h "validate:" "$dir"/grid-*.log | tail -n "$n" | tee -a "$summary"
  tar -czf "$OUT/grid.tar.gz" -C "$dir" . && ls -la "$OUT/grid.tar.gz"
}

stage_python() {
  log "python package with the CUDA backends; DLPack against torch.nn.functional.conv2d in float64"
  # The host's python3 is itself a virtual environment holding PyTorch, nanobind and pytest: use it.
  FFTCONV_VENV="$(python3 -c 'import sys; print(sys.prefix)')" FFTCONV_PIP_OFFLINE=1 FFTCONV_SKIP_NOTEBOOKS=1 \
    FFTCONV_PYTHON_CUDA=ON scripts/python.sh 2>&1 | tee "$OUT/python.log" | tail -15
}

for s in "${STAGES[@]}"; do
  case "$s" in
    build|tests|sanitize|validate|bench|python|grid) "stage_$s" ;;
    *) echo "gpu-check: unknown stage '$s' (build tests sanitize validate bench python grid)" >&2; exit 2 ;;
  esac
done
log "summary"
cat "$summary"
