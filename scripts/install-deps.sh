#!/usr/bin/env bash
# Installs everything vforge builds and tests with: Debian -dev packages (found via pkg-config)
# the npm oracles (DuckDB, arrow-rs via parquet-wasm; ajv and @grpc/grpc-js + @grpc/proto-loader
# for the Qdrant stand-in's REST and gRPC sides) from the committed lock file, and the PyPI
# packages of requirements.lock (pyarrow, polars, duckdb, faiss-cpu, pytest, ...) into .venv.
# Idempotent: skips apt-get when every package is already present.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(build-essential cmake pkg-config
      libzstd-dev libsnappy-dev liblz4-dev zlib1g-dev libbrotli-dev
      libcurl4-openssl-dev libyaml-dev  # libcurl with HTTP/2 (nghttp2): Qdrant gRPC
      clang llvm libclang-rt-14-dev)
pkgs+=(libopenblas0) # the BLAS, opened at run time (dlopen; src/util/blas.c): no headers needed
pkgs+=(dataset-fashion-mnist) # Fashion-MNIST IDX files in /usr/share/datasets/fashion-mnist (vforge convert)
pkgs+=(ceph-mon ceph-osd radosgw) # a real S3 (Ceph radosgw, memstore OSD) for remote-corpus tests
pkgs+=(nginx-light openssl)         # HuggingFace / HTTP stand-in
pkgs+=(slurm-wlm munge)             # single-node Slurm for load-dist / brute-force-dist
pkgs+=(libhdf5-dev python3-h5py)    # ann-benchmarks .hdf5 bundles (reader; h5py writes test fixtures)
pkgs+=(python3-faiss python3-numpy) # FAISS exact-search reference for brute-force tests/bench (tests/eval, bench/brute-force)
pkgs+=(python3-dev python3-venv)   # Python.h for the vforge Python extension (python/, pip install ., make wheel)
pkgs+=(libcairo2-dev fonts-dejavu-core) # bench --plot / vforge plot: PNG and SVG through Cairo, DejaVu Sans text
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ "${VFORGE_SKIP_NPM:-0}" != 1 ] && [ -f "$here/tests/oracle/package.json" ]; then
  if ! command -v npm >/dev/null; then
    apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  (cd "$here/tests/oracle" && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; })
fi
if [ "${VFORGE_SKIP_PIP:-0}" != 1 ] && [ -f "$here/requirements.lock" ]; then
  # .venv/.stamp is newer than the lock once the pinned set is installed
  if [ ! -x "$here/.venv/bin/python" ] || [ ! "$here/.venv/.stamp" -nt "$here/requirements.lock" ]; then
    py=$(command -v python3)
    "$py" -m venv "$here/.venv" || { apt-get install -y -qq --no-install-recommends python3-venv >/dev/null && /usr/bin/python3 -m venv "$here/.venv"; }
    "$here/.venv/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.lock"
    touch "$here/.venv/.stamp"
  fi
fi
