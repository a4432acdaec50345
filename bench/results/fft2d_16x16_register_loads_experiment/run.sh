set -u
cat .proto/head.txt
B=build-gpu; FC=$B/cli/fftconv
SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > /tmp/conf.log 2>&1 || { tail -20 /tmp/conf.log; exit 1; }
cmake --build $B -j 16 --target fftconv_cli gpu_test > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings $(grep -c warning /tmp/build.log)"
mkdir -p $OUT/j
for r in 1 2; do
  for m in 0 1 2; do
    for d in "" "--inverse"; do
      dn=fwd; [ -n "$d" ] && dn=inv
      FFTCONV_EXP16=$m $FC bench fft --dims 2 --sizes 16 --batches 16384,65536 $d --repeat 50 --timer graph --json $OUT/j/p${m}_${dn}_$r.json 2>&1 | grep -E "^ +16x16" | cut -c1-112 | sed "s/^/r$r p$m /"
    done
  done
done
echo "bench done at ${SECONDS}s"
export FFTCONV_EXP16=2
timeout 200 $B/gpu/gpu_test -ts=gpu -tc="*launch shapes*,fbfft forward matches*,fbfft inverse inverts*" > /tmp/t.log 2>&1; echo "tests rc $? at ${SECONDS}s"; grep -E "test cases|assertions|ERROR" /tmp/t.log | head
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu/gpu_test -ts=gpu -tc="*launch shapes*" > /tmp/$tool.log 2>&1
  echo "$tool rc $? at ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/$tool.log | tail -1) $(grep -E 'test cases' /tmp/$tool.log)"
done
