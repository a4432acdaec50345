#!/usr/bin/env bash
# Runs the libFuzzer targets, built with clang, ASan and UBSan by scripts/sanitize.sh in build-san/:
#   fuzz_spec     the problem spec and option parsers            (common/fuzz)
#   fuzz_planner  the spec parser and the tiling planner         (tiling/fuzz)
#   fuzz_cli      the fftconv command line, arguments only       (cli/fuzz)
#   fuzz_resume   validate --resume on a mutated results file    (validation/fuzz)
#   fuzz_merge    validate merge on a mutated set of shard files (validation/fuzz)
# Each starts from its committed seeds (<dir>/fuzz/seeds..., the failures of issue reports among them)
# plus the corpus it grew in build-san/fuzz_corpus/ before.
# Usage: scripts/fuzz.sh [SECONDS=30 per target] [TARGET ...]; FUZZ_RUNS=N runs N executions per target
# instead of a time. A crash, sanitizer report or broken invariant fails the script.
set -euo pipefail
secs="${1:-30}"
[ $# -gt 0 ] && shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FFTCONV_SAN_BUILD:-$root/build-san}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_spec fuzz_planner fuzz_cli fuzz_resume fuzz_merge)
SANITIZE_BUILD_ONLY=1 FFTCONV_SAN_BUILD="$build" "$root/scripts/sanitize.sh" >/dev/null
declare -A bin=([fuzz_spec]=common/fuzz_spec [fuzz_planner]=tiling/fuzz_planner [fuzz_cli]=cli/fuzz_cli
                [fuzz_resume]=validation/fuzz_resume [fuzz_merge]=validation/fuzz_merge)
declare -A seeds=([fuzz_spec]=common/fuzz/seeds [fuzz_planner]=tiling/fuzz/seeds [fuzz_cli]=cli/fuzz/seeds
                  [fuzz_resume]=validation/fuzz/seeds/resume [fuzz_merge]=validation/fuzz/seeds/merge)
declare -A max_len=([fuzz_spec]=256 [fuzz_planner]=256 [fuzz_cli]=512 [fuzz_resume]=8192 [fuzz_merge]=8192)
limit=(-max_total_time="$secs")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
export OMP_NUM_THREADS=1
cd "$build"
for t in "${targets[@]}"; do
  [ -n "${bin[$t]:-}" ] || { echo "fuzz: unknown target $t"; exit 2; }
  corpus="$build/fuzz_corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz_corpus/$t.log"
  echo "== fuzz: $t (${FUZZ_RUNS:+$FUZZ_RUNS runs}${FUZZ_RUNS:-$secs s})"
  # -close_fd_mask=3: the targets' own stdout and stderr (error messages by design) are dropped;
  # libFuzzer's reports and the sanitizers' still reach the log.
  if ! "./${bin[$t]}" "${limit[@]}" -max_len="${max_len[$t]}" -timeout=20 -rss_limit_mb=4096 -close_fd_mask=3 \
      -print_final_stats=1 "$corpus" "$root/${seeds[$t]}" >"$log" 2>&1; then
    tail -60 "$log"
    echo "fuzz: $t FAILED (log: $log)"
    exit 1
  fi
  runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$" || echo "?")
  echo "fuzz: $t: $runs executions, no crash ($(grep -c . <(ls "$corpus")) inputs in its corpus)"
done
