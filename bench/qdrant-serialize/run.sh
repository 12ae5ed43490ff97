#!/usr/bin/env bash
# bench/qdrant-serialize: JSON serialisation of 768-d points into Qdrant upsert bodies, one
# thread, points/s per core (CPU time of that thread).  Target: >= 50k points/s per core.
# Builds bench.c with cc against the build's libvforge.a (default build/; pass another build
# directory as $1).  Usage: bench/qdrant-serialize/run.sh [build-dir] [points] [dim] [batch] [seconds]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-$root/build}")
lib="$build/libvforge.a"
[ -f "$lib" ] || { echo "no $lib: build first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
out="$root/bench/out/qdrant-serialize"
mkdir -p "$out"
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" "$here/bench.c" "$lib" \
  $(pkg-config --libs libcurl libzstd liblz4 zlib libbrotlidec libbrotlienc yaml-0.1) \
  -lsnappy -lpthread -lm -ldl -o "$out/qdrant-serialize"
"$out/qdrant-serialize" "${2:-100000}" "${3:-768}" "${4:-1000}" "${5:-3}" | tee "$out/result.json"
