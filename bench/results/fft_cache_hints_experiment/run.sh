set -u
B=build-gpu
L=/tmp/logs; mkdir -p $L
cat .proto/head.txt
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > $L/conf.log 2>&1 || { tail -20 $L/conf.log; exit 1; }
SECONDS=0
cmake --build $B -j 16 --target fftconv_cli gpu_test > $L/build.log 2>&1 || { grep -E "error|FAILED" $L/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings: $(grep -c warning $L/build.log)"
FC=$B/cli/fftconv
SECONDS=0
timeout 100 $B/gpu/gpu_test -ts=gpu -tc="bench copy*" > $L/tc.log 2>&1; echo "copy test rc $? (${SECONDS}s)"; tail -3 $L/tc.log
for r in 1 2; do
  for m in 0 1 2 4 5; do
    for d in "" "--inverse"; do
      SECONDS=0
      FFTCONV_EXP_HINT=$m $FC bench fft --dims 2 --sizes 8 --batches 16384,65536 $d --timer graph --json $L/h2_${m}_${r}$d.json > $L/h2_$m$d.txt 2>&1
      echo "r$r m$m 2d $d (${SECONDS}s)"; grep -E "^ +8x8" $L/h2_$m$d.txt | cut -c1-330
      FFTCONV_EXP_HINT=$m $FC bench fft --dims 1 --sizes 32 --batches 65536,262144 $d --timer graph --json $L/h1_${m}_${r}$d.json > $L/h1_$m$d.txt 2>&1
      echo "r$r m$m 1d $d"; grep -E "^ +1x32" $L/h1_$m$d.txt | cut -c1-330
    done
  done
done
tar czf $OUT/hint_json.tgz -C $L . 2>/dev/null; echo done
