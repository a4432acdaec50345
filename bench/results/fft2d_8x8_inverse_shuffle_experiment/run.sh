# experiment: 8x8 inverse without shared memory (FFTCONV_EXP_SHFL8=1) vs the committed kernel
set -u
echo "head $(cat .proto/head.txt) + shfl8 experiment"
B=build-gpu; FC=$B/cli/fftconv; SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > /tmp/conf.log 2>&1 || { tail -20 /tmp/conf.log; exit 1; }
cmake --build $B -j 16 --target fftconv_cli gpu_test > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings $(grep -c warning /tmp/build.log)"
FFTCONV_EXP_SHFL8=1 $B/gpu/gpu_test -ts=gpu -tc="fbfft inverse inverts*,*launch shapes*,fbfft forward matches*" 2>&1 | tail -4
echo "tests t=${SECONDS}s"
J=/tmp/j; mkdir -p $J
for r in 1 2 3; do
  for m in 0 1; do
    if [ $m = 1 ]; then export FFTCONV_EXP_SHFL8=1; else unset FFTCONV_EXP_SHFL8; fi
    $FC bench fft --dims 2 --sizes 8 --batches 16384,65536 --inverse --repeat 50 --timer graph --dependent-launch compare --json $J/shfl${m}_r$r.json > $J/o.txt 2>&1
    echo "r$r shfl=$m"; grep -E "^ +8x8" $J/o.txt | cut -c1-140
  done
done
echo "bench t=${SECONDS}s"
FFTCONV_EXP_SHFL8=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $B/gpu/gpu_test -ts=gpu -tc="*launch shapes*,fbfft inverse inverts*" > $J/memcheck.log 2>&1; echo "memcheck rc $? t=${SECONDS}s"
grep -E "SUMMARY|test cases|assertions" $J/memcheck.log
tar czf $OUT/shfl8.tgz -C $J .
