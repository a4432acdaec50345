#!/usr/bin/env bash
# `fftconv run` progress: a run over a second prints "fftconv run: <phase>, N s elapsed" on stderr
# and keeps stdout (--json) clean; a short run and --no-progress print nothing on stderr.
# Usage: run_progress_test.sh FFTCONV_BINARY
set -u
bin=${1:?usage: run_progress_test.sh FFTCONV_BINARY}
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; echo "stdout:"; head -c 600 "$out"; echo; echo "stderr:"; head -c 600 "$err"; exit 1; }
# direct on L2,S=2 on one thread: 2e9 multiply-adds in double, several seconds on any core (on all the
# cores of a large host it would finish in under the second the progress line waits for)
long=(run --problem L2,S=2 --backend direct --check none --repeat 1 --threads 1)
"$bin" "${long[@]}" --json >"$out" 2>"$err" || fail "long run failed"
grep -q "^fftconv run: .*, [0-9]* s elapsed" "$err" || fail "no progress line on stderr"
[[ $(head -c 1 "$out") == "{" && $(tail -c 2 "$out") == "}" ]] || fail "stdout is not one JSON object"
line=$(head -1 "$err")
grep -q "elapsed" "$out" && fail "progress text in stdout"
"$bin" "${long[@]}" --no-progress >"$out" 2>"$err" || fail "--no-progress run failed"
[[ -s $err ]] && fail "--no-progress printed on stderr"
# one thread: with every core's OpenMP team, a host busy with other tests (ctest -j) slowed each
# 8x8 run to over 100 ms and the whole run past the second
"$bin" run --problem n=8,k=3 --backend fftw --threads 1 >"$out" 2>"$err" || fail "short run failed"
[[ -s $err ]] && fail "a short run printed on stderr"
echo "ok: $line"
exit 0
