#!/usr/bin/env bash
# Runs every test: unit tests (ctest, incl. the install/find_package consumer and the bad-input
# corpus), the CPU validation sets, the ASan + UBSan build of the CPU unit tests, a bounded run of
# every fuzz target, the tree checks (docs/results.md and the README's tables match bench/results;
# comment blocks), and the Python package + notebooks.
# Usage: scripts/test.sh            (FUZZ_SECONDS=30 per target by default; SKIP_PYTHON=1 to skip Python)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_missing
build
start=$(date +%s)
echo "== unit tests (ctest)"
ctest --test-dir build --output-on-failure -j "$(nproc)"
echo "== validation: smoke set, every CPU backend, untiled and tiled"
FC=build/cli/fftconv
mkdir -p build/validation-results
$FC validate --set smoke --backends fftw,im2col,direct --out build/validation-results/smoke.jsonl
$FC validate --set smoke --backends fftw --tile auto --out build/validation-results/smoke-tiled.jsonl
echo "== validation: torch-parity (stride, dilation, groups, bias, circular padding), every CPU backend"
$FC validate --set torch-parity --backends fftw,im2col,direct --no-progress --out build/validation-results/torch-parity.jsonl
echo "== validation: the random set (strides, dilations, groups, paddings drawn), every CPU backend, untiled and tiled"
$FC validate --set random --backends fftw,im2col,direct --no-progress --out build/validation-results/random.jsonl
$FC validate --set random --backends fftw --tile auto --no-progress --out build/validation-results/random-tiled.jsonl
echo "== validation: seeded sample of paper-grid, capped in size"
$FC validate --set paper-grid --sample 150 --seed 1 --max-elements 200000 --backends fftw,im2col \
  --out build/validation-results/paper-grid-sample.jsonl
echo "== sanitizers: the CPU library and its unit tests under ASan + UBSan (clang, build-san/)"
scripts/sanitize.sh
echo "== fuzz: spec parser, planner, command line, validate --resume, validate merge (${FUZZ_SECONDS:-30} s each)"
scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
echo "== tree: docs/results.md and the README's tables from bench/results, comment blocks"
python3 bench/report.py --check
python3 scripts/check_comments.py
if [ "${SKIP_PYTHON:-0}" != 1 ]; then
  echo "== python package, pytest and notebooks"
  scripts/python.sh
fi
echo "== all tests passed in $(( $(date +%s) - start )) s after the build"
