#!/usr/bin/env bash
# bench/kernels/run.sh [BUILD_DIR] [--mib=N] [DIM...] — builds bench_distance against BUILD_DIR's
# libvforge.a (default ./build) and prints the kernels' throughput as JSON lines: every variant
# this CPU runs (scalar, avx2, avx512), with its speedup over scalar and AVX2 (vs_scalar, vs_avx2).
# --mib=N: the rows scanned per call (default 64, from memory; e.g. 4 stays in cache).
# Then bench_ivf_kernels: the IVF list-scan kernels (SQ8, PQ ADC, RaBitQ, argmin) the same way.
# Then bench_sgemm: the machine's sgemm peak through vforge's BLAS path (the library and core the
# loader chose, CPU model and core on every line) at SGEMM_THREADS (default 1,2) — the figure the
# brute-force roofline is computed against — side by side with OpenBLAS forced onto its generic
# Prescott kernels (what an unknown CPU model ran on before the loader switched it) and vforge's
# own sgemm (VFORGE_BLAS_LIB=builtin); vs_chosen = rate / the chosen BLAS's rate, same shape,
# mode and threads.  SGEMM_SECONDS (default 0.3) per measurement; SGEMM_ONLY=1 runs only this.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
shift || true
lib="$build/libvforge.a"
[ -f "$lib" ] || { echo "no $lib: build the project first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -o "$out/bench_distance" "$here/bench_distance.c" "$lib" -lm -lpthread -ldl
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" -o "$out/bench_ivf_kernels" "$here/bench_ivf_kernels.c" "$lib" -lm -lpthread -ldl
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -o "$out/bench_sgemm" "$here/bench_sgemm.c" "$lib" -lm -lpthread -ldl
if [ "${SGEMM_ONLY:-0}" != 1 ]; then
  "$out/bench_distance" "$@"
  "$out/bench_ivf_kernels"
fi
sg=(--threads="${SGEMM_THREADS:-1,2}" --seconds="${SGEMM_SECONDS:-0.3}")
"$out/bench_sgemm" "${sg[@]}" | tee "$out/sgemm_chosen.jsonl"
# the same in fresh processes (the BLAS is chosen once per process); the generic core is slow,
# so it runs the block shapes only
( unset VFORGE_BLAS_TEST_PRETEND_CORE; OPENBLAS_CORETYPE=Prescott "$out/bench_sgemm" "${sg[@]}" --shapes=blocks ) >"$out/sgemm_prescott.jsonl" 2>/dev/null || true
( unset OPENBLAS_CORETYPE; VFORGE_BLAS_LIB=builtin "$out/bench_sgemm" "${sg[@]}" ) >"$out/sgemm_builtin.jsonl"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
load = lambda n: [json.loads(l) for l in open(f"{d}/sgemm_{n}.jsonl") if l.strip()]
key = lambda r: (r["bench"], r.get("shape"), r.get("mode"), r["threads"])
chosen = {key(r): r for r in load("chosen")}
for name in ("prescott", "builtin"):
    for r in load(name):
        base = chosen.get(key(r))
        r["variant"] = name
        r["vs_chosen"] = round(r["gflops"] / base["gflops"], 3) if base and base["gflops"] > 0 else None
        print(json.dumps(r))
PY
