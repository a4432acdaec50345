#!/usr/bin/env bash
# Builds the libFuzzer target of the spec parser and tiling planner with clang (ASan + UBSan) in
# build-fuzz/ and runs it for a bounded time: scripts/fuzz.sh [SECONDS=30].
set -euo pipefail
secs="${1:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FFTCONV_FUZZ_BUILD:-$root/build-fuzz}"
mkdir -p "$build"
san="-fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer -g"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFTCONV_FUZZ=ON -DFFTCONV_CUDA=OFF \
  -DFFTCONV_TESTS=OFF -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$san" > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target fuzz_planner -j"$(nproc)"
corpus="$build/fuzz_corpus"
mkdir -p "$corpus"
# Seeds: pass, mode, tile sides, then a spec string.
seed() { printf '%b%s' "$1" "$2" > "$corpus/seed_$3"; }
seed '\x00\x00\x10\x10' 'S=8,f=16,fo=16,n=128,k=5' 1
seed '\x01\x23\x08\x20' 'n=10,k=3,p=1,pad=mirror' 2
seed '\x02\x45\x20\x08' 'h=200,w=20,kh=9,kw=3,ph=2,pw=1' 3
seed '\x00\x87\x40\x40' 'L1,S=4' 4
seed '\x02\x0a\x0c\x0c' 'L5,S=8,pad=reflect' 5
cd "$build"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ./tiling/fuzz_planner -max_total_time="$secs" -max_len=256 -timeout=10 -print_final_stats=1 "$corpus"
