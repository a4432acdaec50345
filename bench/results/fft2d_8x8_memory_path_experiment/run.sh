set -u
cat .proto/head.txt
B=build-gpu; FC=$B/cli/fftconv
SECONDS=0
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > /tmp/conf.log 2>&1 || { tail -20 /tmp/conf.log; exit 1; }
cmake --build $B -j 16 --target fftconv_cli > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo "build ${SECONDS}s, warnings $(grep -c warning /tmp/build.log)"
grep -B2 -A3 warning /tmp/build.log | head -20
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
mkdir -p /tmp/j
summ() { python3 - "$1" "$2" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for r in d['rows']:
    f=r['fbfft']; c=r['cufft']; s=r['same_shape_copy']; z=r['same_size_copy']
    print(f"{sys.argv[2]:>10} b={r['batch']:>6} fb={f['median_ms']*1e3:6.3f}us {f['copy_fraction']*100:5.1f}% shape={s['median_ms']*1e3:6.3f}us {s['copy_fraction']*100:5.1f}% size={z['median_ms']*1e3:6.3f} cufft={c['median_ms']*1e3:6.3f} x{r['speedup']:.3f} ver={r['verified']} copyGBs={d['copy_gbps']:.0f}")
PY
}
for r in 1 2; do
  for m in ${MODES:-base r1 r4 r5}; do
    for d in "" "--inverse"; do
      mm=${m%%:*}; th=${m#*:}; [ "$th" = "$m" ] && th=""
      if [ $mm = base ]; then unset FFTCONV_EXP8; else export FFTCONV_EXP8=$mm; fi
      if [ -n "$th" ]; then export FFTCONV_EXP8_THREADS=$th; else unset FFTCONV_EXP8_THREADS; fi
      J=/tmp/j/${m}_${r}${d}.json
      timeout 60 $FC bench fft --dims 2 --sizes 8 --batches 16384,65536 $d --repeat 50 --timer graph --json $J > /tmp/j/${m}_${r}${d}.txt 2>&1
      rc=$?
      [ $rc = 0 ] || { echo "$m $d rc $rc"; tail -3 /tmp/j/${m}_${r}${d}.txt; }
      [ -f $J ] && summ $J "r$r $m${d:+ inv}"
    done
  done
  echo "round $r done at ${SECONDS}s"
done
tar czf $OUT/exp8.tgz -C /tmp/j .
