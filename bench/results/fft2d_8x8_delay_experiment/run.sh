# experiment: the 8x8 inverse's bytes copied on its grid with a chain of D dependent FMAs between loads and stores
set -u
echo "head $(cat .proto/head.txt) + delay_copy8 experiment"
B=build-gpu; FC=$B/cli/fftconv; SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > /tmp/conf.log 2>&1 || { tail -20 /tmp/conf.log; exit 1; }
cmake --build $B -j 16 --target fftconv_cli > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings $(grep -c warning /tmp/build.log)"
J=/tmp/j; mkdir -p $J
for r in 1 2; do
  for d in kernel 0 16 32 64 128 256 512; do
    if [ $d = kernel ]; then unset FFTCONV_EXP_DELAY8; else export FFTCONV_EXP_DELAY8=$d; fi
    $FC bench fft --dims 2 --sizes 8 --batches 16384,65536 --inverse --repeat 50 --timer graph --json $J/d${d}_r$r.json > $J/o.txt 2>&1
    grep -E "^ +8x8" $J/o.txt | awk -v d=$d -v r=$r '{print "r" r, "delay=" d, $2, $5, $10, $11}'
  done
done
echo "t=${SECONDS}s"
tar czf $OUT/delay8.tgz -C $J .
