#!/usr/bin/env bash
# Builds the CPU library, a reduced set of its unit tests and the libFuzzer targets with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer in build-san/ (CPU only; scripts/fuzz.sh runs the
# fuzz targets from the same build), then runs the unit tests: any sanitizer report fails them.
# Usage: scripts/sanitize.sh [TEST ...]   (default: common_test tiling_test ref_test validation_test)
# Environment: FFTCONV_SAN_BUILD (build dir), SANITIZE_BUILD_ONLY=1 (configure and build only).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FFTCONV_SAN_BUILD:-$root/build-san}"
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(common_test tiling_test ref_test validation_test)
fuzzers=(fuzz_spec fuzz_planner fuzz_cli fuzz_resume fuzz_merge)
mkdir -p "$build"
# fuzzer-no-link: the libraries carry libFuzzer's coverage instrumentation for the fuzz targets.
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFTCONV_CUDA=OFF -DFFTCONV_TESTS=ON \
    -DFFTCONV_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$san" "${launcher[@]}" \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
fi
cmake --build "$build" --target "${tests[@]}" "${fuzzers[@]}" -j"$(nproc)"
[ "${SANITIZE_BUILD_ONLY:-0}" = 1 ] && exit 0
# allocator_may_return_null: malloc (fftw_malloc) returns null on a huge request as without ASan.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
start=$SECONDS
cd "$build"
for t in "${tests[@]}"; do
  bin=$(find . -name "$t" -type f -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "sanitize: no test binary $t"; exit 1; }
  echo "== sanitize: $t (ASan + UBSan)"
  t0=$SECONDS
  "$bin" --no-intro --minimal || { echo "sanitize: $t FAILED"; exit 1; }
  echo "   $t clean in $((SECONDS - t0)) s"
done
echo "== sanitize: ${#tests[@]} test programs clean under ASan + UBSan in $((SECONDS - start)) s"
