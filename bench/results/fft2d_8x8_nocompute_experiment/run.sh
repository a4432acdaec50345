set -u
cat .proto/head.txt
B=build-gpu; FC=$B/cli/fftconv
SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > /tmp/conf.log 2>&1 || { tail -20 /tmp/conf.log; exit 1; }
cmake --build $B -j 16 --target fftconv_cli > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings $(grep -c warning /tmp/build.log)"
mkdir -p /tmp/j
for r in 1 2; do
  for m in 0 1; do
    for d in "" "--inverse"; do
      if [ $m = 1 ]; then export FFTCONV_EXP_NOCOMPUTE=1; else unset FFTCONV_EXP_NOCOMPUTE; fi
      $FC bench fft --dims 2 --sizes 8 --batches 16384,65536 $d --timer graph --json /tmp/j/nc_${m}_${r}$d.json > /tmp/j/o.txt 2>&1
      echo "r$r nocompute=$m $d rc $?"; grep -E "^ +8x8" /tmp/j/o.txt | cut -c1-260
    done
  done
done
tar czf $OUT/nc.tgz -C /tmp/j .
