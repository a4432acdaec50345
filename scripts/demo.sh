#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, then run a small embedded problem
# set — every pass on every CPU backend, and the paper's L1–L5 layers at a reduced batch — and print
# a table of times and errors against the float64 reference.
# Usage: scripts/demo.sh [BATCH=2]   (the batch used for the L1–L5 rows)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_missing
build
S=${1:-2}
FC=build/cli/fftconv
PROBLEMS=(
  "S=4,f=3,fo=5,n=17,k=3,p=1"
  "S=2,f=4,fo=4,h=23,w=31,kh=5,kw=3,ph=2,pw=1,pad=mirror"
  "S=8,f=16,fo=16,n=64,k=5,p=2"
  "L1,S=$S" "L2,S=$S" "L3,S=$S" "L4,S=$S" "L5,S=$S"
)
BACKENDS=(fftw im2col direct)
echo
echo "fftconv demo: $(nproc) cores; times are medians, errors are rel_l2 against the float64 reference"
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for spec in "${PROBLEMS[@]}"; do
  for pass in fprop bprop accgrad; do
    for backend in "${BACKENDS[@]}"; do
      repeat=3
      [ "$backend" = direct ] && repeat=1
      $FC run --problem "$spec" --pass "$pass" --backend "$backend" --repeat "$repeat" --json |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))' >>"$rows" || {
        echo "demo: fftconv run failed for $spec $pass $backend" >&2; exit 1; }
    done
  done
  printf '.' >&2
done
echo >&2
python3 - "$rows" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault((r["problem"], r["pass"]), {})[r["backend"]] = r
print(f'{"problem":<48} {"pass":<8} {"fftw ms":>9} {"im2col ms":>10} {"direct ms":>10} {"fftw/im2col":>11} {"fftw rel_l2":>11} {"im2col rel_l2":>13} {"ref":>6} ok')
for (prob, ps), b in by.items():
    f, i, d = b["fftw"], b["im2col"], b["direct"]
    ok = all(x["ok"] for x in b.values())
    print(f'{prob[:48]:<48} {ps:<8} {f["time_ms"]["median"]:9.2f} {i["time_ms"]["median"]:10.2f} {d["time_ms"]["median"]:10.1f} '
          f'{i["time_ms"]["median"]/f["time_ms"]["median"]:10.1f}x {f["error"]["rel_l2"]:11.2e} {i["error"]["rel_l2"]:13.2e} {f["reference"]:>6} {"yes" if ok else "NO"}')
bad = [r for r in rows if not r["ok"]]
sys.exit(1 if bad else 0)
PY
