#!/usr/bin/env bash
# `fftconv validate` whose record file stops taking data mid-sweep (`ulimit -f`: the first records
# fit, a later write fails with EFBIG): the run fails naming the file, with exit status 2, instead of
# ending as if every record had been written.
# Usage: record_write_test.sh FFTCONV_BINARY
set -u
bin=${1:?usage: record_write_test.sh FFTCONV_BINARY}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 8 blocks of 512 bytes: a few records of the smoke set, far from all of them.
(ulimit -f 8 && trap '' XFSZ && exec "$bin" validate --set smoke --backends direct --no-progress \
  --out "$dir/records.jsonl") >/dev/null 2>"$dir/err"
rc=$?
lines=$(wc -l <"$dir/records.jsonl")
echo "exit status $rc after $lines records: $(cat "$dir/err")"
[[ $rc == 2 && $lines -gt 0 ]] && grep -q "out: cannot write '.*records.jsonl'" "$dir/err"
