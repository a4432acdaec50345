# Shared by demo.sh and test.sh: install what is missing (Debian packages), configure and build in build/.
# Idempotent: a second run installs nothing and rebuilds only what changed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

DEBIAN_PACKAGES="build-essential cmake ninja-build pkg-config libfftw3-dev libeigen3-dev doctest-dev libcli11-dev
nlohmann-json3-dev libomp-dev clang libclang-rt-14-dev python3 python3-venv python3-dev git time"

install_missing() {
  local missing=()
  for p in $DEBIAN_PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  # A python3 that already has venv (e.g. pyenv) satisfies the Python packages.
  if command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
    local keep=()
    for p in "${missing[@]:-}"; do
      case "$p" in python3|python3-venv|python3-dev|"") ;; *) keep+=("$p") ;; esac
    done
    missing=("${keep[@]:-}")
  fi
  if [ -n "${missing[*]:-}" ]; then
    echo "== installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

build() {
  fetch_mathdx
  local jobs
  jobs=$(nproc)
  if [ ! -f build/build.ninja ]; then
    echo "== configuring build/ (CUDA backends are compiled when nvcc is found)"
    mkdir -p build && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${FFTCONV_CMAKE_ARGS:-} >build/configure.log 2>&1 ||
      { mkdir -p build; cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${FFTCONV_CMAKE_ARGS:-}; }
  fi
  echo "== building (ninja -j$jobs)"
  cmake --build build -j "$jobs"
}

# Header-only CUTLASS for the GPU products (gpu/gemm): the nvidia-mathdx wheel from PyPI, unpacked
# once into .deps/ (git-ignored). A host that has it already (the GPU host's .devdeps/env.sh) sets
# MATHDX_ROOT and skips this.
MATHDX_WHEEL=nvidia-mathdx==25.6.0
fetch_mathdx() {
  command -v nvcc >/dev/null || return 0
  if [ -z "${MATHDX_ROOT:-}" ]; then
    local d="$ROOT/.deps/mathdx"
    if [ ! -d "$d/nvidia/mathdx/external/cutlass/include" ]; then
      echo "== fetching $MATHDX_WHEEL (CUTLASS headers) into .deps/"
      mkdir -p "$ROOT/.deps"
      ls "$ROOT"/.deps/nvidia_mathdx-*.whl >/dev/null 2>&1 ||
        python3 -m pip download -q --no-deps -d "$ROOT/.deps" "$MATHDX_WHEEL"
      python3 -m zipfile -e "$(ls "$ROOT"/.deps/nvidia_mathdx-*.whl | head -1)" "$d"
    fi
    export MATHDX_ROOT="$d/nvidia/mathdx"
  fi
}

# nvcc is not always on PATH even when the toolkit is installed.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
