# (run from a checkout of 0a963e7 with both patches of this directory and of ../quad16_host_wholeness_experiment
# applied to the working tree and saved together as .proto/v16.patch; its commit in .proto/head.txt)
# call 1 (sixteenth session): working tree = V (1-D store_real one loop; 16x16 wholeness chosen on the host),
# /tmp/h = HEAD (V's patch reversed). Build both; V's fbfft tests; then H vs V alternating.
set -u
echo "head $(cat .proto/head.txt) + .proto/v16.patch (working tree)"
SECONDS=0; J=/tmp/j16; mkdir -p $J
rm -rf /tmp/h && mkdir /tmp/h && tar --exclude=./build-gpu --exclude=./.devdeps --exclude=./.git -cf - . | tar -C /tmp/h -xf -
(cd /tmp/h && patch -R -p1 -s < .proto/v16.patch) || { echo "reverse patch failed"; exit 1; }
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > $2.conf.log 2>&1 && cmake --build $2 -j $3 $4 > $2.build.log 2>&1; echo "$2 rc $? warnings $(grep -c warning $2.build.log) t=${SECONDS}s"; }
mkdir -p build-gpu /tmp/bh
cfg . build-gpu 11 "" & cfg /tmp/h /tmp/bh 5 "--target fftconv_cli" & wait
V=build-gpu/cli/fftconv; H=/tmp/bh/cli/fftconv
[ -x $H ] && [ -x $V ] && [ -x build-gpu/gpu/gpu_test ] || { grep -E "error|FAILED" build-gpu.build.log /tmp/bh.build.log | head -20; exit 1; }
build-gpu/gpu/gpu_test -ts=gpu -tc="*fbfft*" -tce="fbfft conv*,*smooth*" > $OUT/t.log 2>&1; echo "V fbfft tests rc $? t=${SECONDS}s"; tail -3 $OUT/t.log
run() { local lim=$((575 - SECONDS)); [ $lim -gt 30 ] || { echo "skip ${*:2:8}"; return; }; timeout $lim "$@" > /dev/null 2>&1; echo "rc $? t=${SECONDS}s: ${*:2:9}"; }
one() {  # one round of variant $1 (H or V), tag $2
  local B=${!1}
  for d in "" --inverse; do n=fwd; [ -n "$d" ] && n=inv
    run $B bench fft --dims 2 --sizes 16 --batches 16,1024,16384,16389,65536 $d --repeat 20 --timer graph --json $J/q_${n}_$1$2.json
  done
  run $B bench fft --dims 1 --sizes 8,16,32,64,128,256 --batches 16,16389,65536,262144 --inverse --repeat 20 --timer graph --json $J/s_inv_$1$2.json
}
one H 1; one V 1; one V 2; one H 2
# call 3 of the session (after the sanitizers): bench conv on V, then a third round (V H V H; the tag is $SECONDS)
# V=build-gpu/cli/fftconv; H=/tmp/bh/cli/fftconv; J=/tmp/j16c
# for v in V H V H; do B=${!v}
#   $B bench fft --dims 2 --sizes 16 --batches 16384,16389,65536 --inverse --repeat 20 --timer graph --json $J/r3_q_inv_$v$SECONDS.json
#   $B bench fft --dims 1 --sizes 8,16,32,64,128,256 --batches 16,16389,65536 --inverse --repeat 20 --timer graph --json $J/r3_s_inv_$v$SECONDS.json
# done
