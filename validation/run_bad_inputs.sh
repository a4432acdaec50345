#!/usr/bin/env bash
# Runs every case of the bad-input corpus (validation/bad_inputs.txt) against the built `fftconv`:
# each must exit with the expected status (never a signal) and print the expected fragment on stderr.
# Usage: run_bad_inputs.sh FFTCONV_BINARY CORPUS_FILE
set -u
bin=${1:?usage: run_bad_inputs.sh FFTCONV_BINARY CORPUS_FILE}
corpus=${2:?usage: run_bad_inputs.sh FFTCONV_BINARY CORPUS_FILE}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
corpus=$(cd "$(dirname "$corpus")" && pwd)/$(basename "$corpus")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }
cases=0 failed=0 lineno=0
while IFS= read -r line || [[ -n $line ]]; do
  lineno=$((lineno + 1))
  [[ -z $(trim "$line") || $(trim "$line") == \#* ]] && continue
  IFS='|' read -r status fragment args <<<"$line"
  status=$(trim "$status") fragment=$(trim "$fragment") args=$(trim "$args")
  eval "set -- $args"
  cases=$((cases + 1))
  timeout 120 "$bin" "$@" >"$work/out" 2>"$work/err"
  rc=$?
  if [[ $rc != "$status" ]] || ! grep -qF -- "$fragment" "$work/err"; then
    failed=$((failed + 1))
    echo "FAIL line $lineno: fftconv $args"
    echo "  expected status $status and '$fragment' on stderr; got status $rc, stderr:"
    sed 's/^/    /' "$work/err" | head -5
  fi
done <"$corpus"
echo "bad inputs: $cases cases, $failed failed"
[[ $cases -gt 0 && $failed -eq 0 ]]
