#!/usr/bin/env bash
# Builds the fftconv Python package into the project's .venv (created or updated idempotently),
# runs its pytest tests (python/tests) and executes every notebook with nbclient (a test).
# Called by scripts/test.sh; runs from a fresh clone. Environment knobs:
#   FFTCONV_VENV=dir            the virtual environment (default <repo>/.venv)
#   FFTCONV_VENV_SYSTEM_SITE=1  create it with --system-site-packages (e.g. to see PyTorch)
#   FFTCONV_PYTHON_CUDA=ON      build the CUDA backends into the extension (needs nvcc)
#   FFTCONV_PIP_OFFLINE=1       install from <repo>/.whl only (pip --no-index); .whl is used when present
#   FFTCONV_NOTEBOOK_TIMEOUT=s  per-cell timeout when executing notebooks (default 300)
#   FFTCONV_SKIP_NOTEBOOKS=1    run the unit tests only (pytest -m "not notebooks")
#   FFTCONV_SKIP_TORCH=1        do not install PyTorch (its tests, fftconv.torch's, then skip)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FFTCONV_VENV:-$ROOT/.venv}"
BUILD_DIR="$ROOT/build-python"
PY="${PYTHON:-python3}"
# pip name:import name. The notebook tools are skipped with FFTCONV_SKIP_NOTEBOOKS=1 (e.g. on a GPU
# host without a package index, where only the build tools and pytest are carried as wheels).
DEPS=(nanobind:nanobind scikit-build-core:scikit_build_core numpy:numpy scipy:scipy pytest:pytest)
[[ "${FFTCONV_SKIP_NOTEBOOKS:-0}" == 1 ]] ||
  DEPS+=(matplotlib:matplotlib nbclient:nbclient nbformat:nbformat ipykernel:ipykernel jupyter_client:jupyter_client)

PIP_OPTS=(--disable-pip-version-check -q)
[[ -d "$ROOT/.whl" ]] && PIP_OPTS+=(--find-links "$ROOT/.whl")
[[ "${FFTCONV_PIP_OFFLINE:-0}" == 1 ]] && PIP_OPTS+=(--no-index)

step() { printf '== python.sh: %s\n' "$*"; }
t0=$SECONDS

if [[ ! -x "$VENV/bin/python" ]]; then
  step "creating $VENV"
  venv_opts=()
  [[ "${FFTCONV_VENV_SYSTEM_SITE:-0}" == 1 ]] && venv_opts+=(--system-site-packages)
  "$PY" -m venv "${venv_opts[@]}" "$VENV"
fi
VPY="$VENV/bin/python"
missing=()
for d in "${DEPS[@]}"; do
  "$VPY" -c "import ${d#*:}" 2>/dev/null || missing+=("${d%%:*}")
done
if ((${#missing[@]})); then
  step "installing ${missing[*]}"
  "$VPY" -m pip install "${PIP_OPTS[@]}" "${missing[@]}"
fi

# PyTorch for fftconv.torch's tests: PyPI's wheel, whose CPU path needs no GPU. It is installed
# without triton, which only torch.compile uses (1 GB; the rest is 4.4 GB), one requirement at a
# time and without keeping the downloaded wheels, so that a fresh clone's tests fit on a small disk.
# Without an index (FFTCONV_PIP_OFFLINE=1) a missing wheel only skips those tests.
torch_deps() { # torch's requirements for this interpreter, triton left out
  "$VPY" - <<'PYEOF'
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
for line in requires("torch") or []:
    r = Requirement(line)
    if r.name != "triton" and (r.marker is None or r.marker.evaluate({"extra": ""})):
        print(line.split(";")[0].strip())
PYEOF
}
if [[ "${FFTCONV_SKIP_TORCH:-0}" != 1 ]] && ! "$VPY" -c "import torch" 2>/dev/null; then
  step "installing torch (without triton)"
  if "$VPY" -m pip install "${PIP_OPTS[@]}" --no-cache-dir --no-deps torch; then
    mapfile -t tdeps < <(torch_deps)
    ((${#tdeps[@]})) || { echo "python.sh: torch's requirements could not be read" >&2; exit 1; }
    for r in "${tdeps[@]}"; do # one at a time: only one requirement's wheels on disk at once
      "$VPY" -m pip install "${PIP_OPTS[@]}" --no-cache-dir --no-warn-conflicts "$r"
    done
  else
    [[ "${FFTCONV_PIP_OFFLINE:-0}" == 1 ]] || exit 1
    step "torch is not in the offline wheels: fftconv.torch's tests will skip"
  fi
fi

step "building and installing ./python (build dir $BUILD_DIR)"
# No build isolation: the build requirements are in the venv already (and the GPU host has no index).
"$VPY" -m pip install "${PIP_OPTS[@]}" --no-build-isolation --no-deps --force-reinstall \
  -C build-dir="$BUILD_DIR" "$ROOT/python"

if [[ "${FFTCONV_SKIP_NOTEBOOKS:-0}" != 1 ]]; then
  # The notebooks' kernel is this venv's interpreter, whatever kernelspecs the user has elsewhere.
  "$VPY" -m ipykernel install --sys-prefix --name python3 >/dev/null
  export JUPYTER_PREFER_ENV_PATH=1 MPLBACKEND=Agg
fi

step "pytest python/tests (notebooks included)"
cd "$ROOT"
select=()
[[ "${FFTCONV_SKIP_NOTEBOOKS:-0}" == 1 ]] && select=(-m "not notebooks")
"$VPY" -m pytest -q -p no:cacheprovider --durations=5 "${select[@]}" python/tests
step "done in $((SECONDS - t0)) s"
