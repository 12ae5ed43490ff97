#!/usr/bin/env bash
# bench/kernels/run.sh [BUILD_DIR] [--mib=N] [DIM...] — builds bench_distance against BUILD_DIR's
# libvforge.a (default ./build) and prints the kernels' throughput as JSON lines: every variant
# this CPU runs (scalar, avx2, avx512), with its speedup over scalar and AVX2 (vs_scalar, vs_avx2).
# --mib=N: the rows scanned per call (default 64, from memory; e.g. 4 stays in cache).
# Then bench_ivf_kernels: the IVF list-scan kernels (SQ8, PQ ADC, RaBitQ, argmin) the same way.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shift || true
lib="$build/libvforge.a"
[ -f "$lib" ] || { echo "no $lib: build the project first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -o "$out/bench_distance" "$here/bench_distance.c" "$lib" -lm -lpthread
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" -o "$out/bench_ivf_kernels" "$here/bench_ivf_kernels.c" "$lib" -lm -lpthread
"$out/bench_distance" "$@"
"$out/bench_ivf_kernels"
