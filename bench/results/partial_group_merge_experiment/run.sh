# (run from a checkout of 759791c with this directory's merge.patch at .proto/merge.patch and its commit in .proto/head.txt)
# call 3: build HEAD and the merged partial-group variant (.proto/merge.patch); README 2-D tables on HEAD;
# then HEAD vs merged on the rows the merge touches, alternating, two rounds
set -u
echo "head $(cat .proto/head.txt)"
SECONDS=0; J=/tmp/j15; mkdir -p $J
rm -rf /tmp/m && mkdir /tmp/m && tar --exclude=./build-gpu --exclude=./.devdeps --exclude=./.git -cf - . | tar -C /tmp/m -xf -
(cd /tmp/m && patch -p1 -s < .proto/merge.patch) || { echo "patch failed"; exit 1; }
cfg() { cmake -S $1 -B $2 -G Ninja -DCMAKE_BUILD_TYPE=Release -DFFTCONV_CUDA=ON > $2.conf.log 2>&1 && cmake --build $2 -j 8 --target fftconv_cli > $2.build.log 2>&1; echo "$2 rc $? warnings $(grep -c warning $2.build.log)"; }
mkdir -p build-gpu /tmp/bm
cfg . build-gpu & cfg /tmp/m /tmp/bm & wait
echo "builds t=${SECONDS}s"
H=build-gpu/cli/fftconv; M=/tmp/bm/cli/fftconv
[ -x $H ] && [ -x $M ] || { tail -20 /tmp/bm.build.log; exit 1; }
run() { local lim=$((560 - SECONDS)); [ $lim -gt 20 ] || { echo "skip $*"; return; }; timeout $lim "$@" > /dev/null 2>&1; echo "rc $? t=${SECONDS}s: ${*:2:12}"; }
for t in graph calls; do
  dl=(); [ $t = graph ] && dl=(--dependent-launch compare)
  sfx=; [ $t = graph ] && sfx=_graph
  run $H bench fft --dims 2 --sizes 8,16,32,64,128 --batches 16384,65536 --repeat 50 --timer $t "${dl[@]}" --json $J/fft2d_forward${sfx}_h100.json
  run $H bench fft --dims 2 --sizes 8,16,32,64,128 --batches 16384,65536 --inverse --repeat 50 --timer $t "${dl[@]}" --json $J/fft2d_inverse${sfx}_h100.json
done
for r in 1 2; do for v in H M; do B=${!v}; for d in "" --inverse; do
  n=fwd; [ -n "$d" ] && n=inv
  run $B bench fft --dims 2 --sizes 16 --batches 16,1024,16384,65536 $d --repeat 20 --timer graph --json $J/m2_${n}_${v}$r.json
  run $B bench fft --dims 1 --sizes 8,16,32,64,128,256 --batches 16,16389,65536,262144 $d --repeat 20 --timer graph --json $J/m1_${n}_${v}$r.json
done; done; done
tar czf $OUT/j15.tgz -C $J .
echo "done t=${SECONDS}s"
