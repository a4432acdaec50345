#!/usr/bin/env bash
# `fftconv run` out of memory inside an OpenMP region, under `ulimit -v`: exit status 2 and a
# message naming the bytes, never a signal. The cap is the address space the binary needs to start
# (found by bisection on `fftconv --version`) plus 800 MiB: the operands and frequency buffers of the
# untiled 4096x4096 fprop (about 340 MB) fit, one thread's transform scratch (1.1 GB) does not.
# Usage: out_of_memory_test.sh FFTCONV_BINARY
set -u
bin=${1:?usage: out_of_memory_test.sh FFTCONV_BINARY}
starts() { (ulimit -v "$1" && "$bin" --version) >/dev/null 2>&1; }
lo=1024 hi=$((64 * 1024 * 1024))  # KiB: lo fails, hi starts
starts "$hi" || { echo "fftconv --version does not start under 64 GiB of address space"; exit 1; }
while ((hi - lo > 8192)); do
  mid=$(((lo + hi) / 2))
  if starts "$mid"; then hi=$mid; else lo=$mid; fi
done
cap=$((hi + 800 * 1024))
err=$(mktemp)
trap 'rm -f "$err"' EXIT
(ulimit -v "$cap" && exec "$bin" run --problem S=1,n=4096,k=3 --tile none --check none --repeat 1 --threads 1 \
  --backend fftw --opt fftw_planner=estimate) >/dev/null 2>"$err"
rc=$?
echo "cap $((cap / 1024)) MiB (start needs $((hi / 1024)) MiB): exit status $rc: $(cat "$err")"
[[ $rc == 2 ]] && grep -q "out of memory: .* [0-9][0-9]* bytes" "$err"
