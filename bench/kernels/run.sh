#!/usr/bin/env bash
# bench/kernels/run.sh [BUILD_DIR] [DIM...] — builds bench_distance against BUILD_DIR's
# libvforge.a (default ./build) and prints the kernels' throughput as JSON lines.
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
"$out/bench_distance" "$@"
