#!/usr/bin/env bash
# Issue 17 item 2: `vforge brute-force` end to end (parquet read, scoring, top-k, re-scoring,
# write) against the machine's sgemm peak and FAISS IndexFlat, in one run, at the same --threads:
#   - the sgemm peak through vforge's BLAS path (bench/kernels/bench_sgemm.c, sgemm_peak line);
#   - vforge brute-force on Fashion-MNIST train (60000 x 784 parquet) with NQ t10k images
#     (generate-queries, seed 1) as held-out queries, k 100: seconds, GFLOP/s with flops = 2*N*Q*d, % of the peak;
#   - FAISS IndexFlatL2 (IndexFlatIP for cosine) add + search, data already in RAM, once per
#     Python that has faiss: the pinned faiss-cpu of $VF_PY (its own OpenBLAS) and Debian's
#     python3-faiss (/usr/bin/python3, the system OpenBLAS);
# and prints the ratios (targets: >= 60 % of the peak, >= 1.5x each FAISS).
# Usage: bench/brute-force/run.sh [METRIC=euclid] ; env VFORGE, BUILD, THREADS (nproc), K (100),
#        NQ (1000), PYS (the Pythons with FAISS, default "$VF_PY /usr/bin/python3"), REPS (1: best
#        of REPS runs of each side), SGEMM_SECONDS (0.3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
V=${VFORGE:-$BUILD/vforge}
METRIC=${1:-euclid}
K=${K:-100}
NQ=${NQ:-1000}
REPS=${REPS:-1}
THREADS=${THREADS:-$(nproc)}
VF_PY=${VF_PY:-$root/.venv/bin/python}
PYS=${PYS:-$VF_PY /usr/bin/python3}
FM=/usr/share/datasets/fashion-mnist
[ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "need dataset-fashion-mnist ($FM)"; exit 77; }
[ -f "$BUILD/libvforge.a" ] || { echo "no $BUILD/libvforge.a: build the project first"; exit 2; }
pys=()
for py in $PYS; do
  if [ -x "$py" ] && "$py" -c 'import faiss, numpy' 2>/dev/null; then pys+=("$py"); else echo "skip $py: no faiss or numpy there"; fi
done
[ ${#pys[@]} -gt 0 ] || { echo "need a Python with faiss and numpy (pinned faiss-cpu in \$VF_PY, or python3-faiss)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the sgemm peak of this run, same threads
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -o "$tmp/bench_sgemm" "$root/bench/kernels/bench_sgemm.c" \
  "$BUILD/libvforge.a" -lm -lpthread -ldl
"$tmp/bench_sgemm" --threads="$THREADS" --seconds="${SGEMM_SECONDS:-0.3}" > "$tmp/sgemm.jsonl"

"$V" --quiet convert "$FM/train-images-idx3-ubyte.gz" --output "$tmp/fm"
"$V" --quiet convert "$FM/t10k-images-idx3-ubyte.gz" --output "$tmp/test"
# NQ t10k rows as queries (generate-queries layout; held out from the indexed rows)
"$V" --quiet generate-queries "$tmp/test" -n "$NQ" --seed 1 --output "$tmp/q.parquet"
"$V" --quiet cat "$tmp/q.parquet" --columns __source_row__ > "$tmp/qrows.jsonl"
best=""
for r in $(seq "$REPS"); do
  t0=$(date +%s.%N)
  "$V" --quiet --threads "$THREADS" brute-force "$tmp/fm" --queries "$tmp/q.parquet" -k "$K" --metric "$METRIC" \
    --output "$tmp/bf.parquet"
  t1=$(date +%s.%N)
  s=$(echo "$t1 - $t0" | bc -l)
  if [ -z "$best" ] || [ "$(echo "$s < $best" | bc -l)" = 1 ]; then best=$s; fi
done
echo "vforge brute-force: best of $REPS end-to-end runs: $best s"
: > "$tmp/faiss.txt"
"$V" --threads "$THREADS" version --json > "$tmp/version.json" 2>/dev/null
# FAISS twice per Python: with the OpenBLAS core its library picks itself, and with the core
# vforge's loader chose (FAISS_CORETYPE overrides it) — an older OpenBLAS that does not know the
# CPU falls back to generic kernels, and the fair comparison gives FAISS the CPU's best ones
fcore=${FAISS_CORETYPE:-$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["blas"].get("core") or "")' "$tmp/version.json")}
# an OpenBLAS older than the core's name ignores it (faiss-cpu's 0.3.15 has no Cooperlake): then the
# next older core with the same kernels for sgemm is tried, and the run that got the core it asked for counts
case $fcore in Cooperlake|SapphireRapids) fcores="$fcore SkylakeX";; *) fcores=$fcore;; esac
for py in "${pys[@]}"; do
 for ct in "" $fcores; do
  env ${ct:+OPENBLAS_CORETYPE=$ct} "$py" - "$FM" "$tmp/qrows.jsonl" "$METRIC" "$K" "$THREADS" "$REPS" "$py" > "$tmp/faiss1.json" <<'PY'
import ctypes, gzip, json, os, sys, time
import numpy as np, faiss
def blas_core():
    """the core of the OpenBLAS loaded in this process beside faiss (/proc/self/maps)"""
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "openblas" in l and ".so" in l})
    for path in libs:
        if "scipy_openblas" in path and "faiss" not in path:
            continue  # numpy's own, not the one faiss calls
        lib = ctypes.CDLL(path)
        for name in ("openblas_get_corename", "openblas_get_corename64_", "scipy_openblas_get_corename64_"):
            f = getattr(lib, name, None)
            if f:
                f.restype = ctypes.c_char_p
                return f().decode()
    return "?"
fm, qf, metric, k, threads, reps, py = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
def images(p):
    raw = gzip.open(p).read()
    n, h, w = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    return np.ascontiguousarray(np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, h * w).astype(np.float32))
X = images(f"{fm}/train-images-idx3-ubyte.gz")
T = images(f"{fm}/t10k-images-idx3-ubyte.gz")
Q = np.ascontiguousarray(T[[json.loads(l)["__source_row__"] for l in open(qf)]])
faiss.omp_set_num_threads(threads)
d = X.shape[1]
best = None
for _ in range(reps):
    t0 = time.perf_counter()
    if metric == "cosine":
        Xn, Qn = X.copy(), Q.copy(); faiss.normalize_L2(Xn); faiss.normalize_L2(Qn)
        ix = faiss.IndexFlatIP(d); ix.add(Xn); ix.search(Qn, k)
    elif metric == "euclid":
        ix = faiss.IndexFlatL2(d); ix.add(X); ix.search(Q, k)
    else:
        mt = {"dot": faiss.METRIC_INNER_PRODUCT, "manhattan": faiss.METRIC_L1}[metric]
        ix = faiss.IndexFlat(d, mt); ix.add(X); ix.search(Q, k)
    s = time.perf_counter() - t0
    best = s if best is None else min(best, s)
print(json.dumps({"python": py, "faiss": faiss.__version__, "seconds": best, "n": len(X), "d": d, "nq": len(Q),
                  "core": blas_core(), "coretype_env": os.environ.get("OPENBLAS_CORETYPE", "")}))
PY
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["core"])' "$tmp/faiss1.json")
  # keep the run with the library's own choice, and the first run whose core is the one asked for
  if [ -z "$ct" ] || [ "$got" = "$ct" ]; then cat "$tmp/faiss1.json" >> "$tmp/faiss.txt"; fi
  if [ -n "$ct" ] && [ "$got" = "$ct" ]; then break; fi
 done
done
python3 - "$tmp/sgemm.jsonl" "$tmp/faiss.txt" "$tmp/version.json" "$best" "$METRIC" "$K" "$THREADS" <<'PY'
import json, sys
sg = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fa = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ver = json.load(open(sys.argv[3]))
vf, metric, k, threads = float(sys.argv[4]), sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
peak = max((r["gflops"] for r in sg if r["bench"] == "sgemm_peak" and r["threads"] == threads), default=0.0)
n, d, nq = fa[0]["n"], fa[0]["d"], fa[0]["nq"]
flops = 2.0 * n * nq * d
rate = flops / vf / 1e9
print(f"cpu {ver.get('cpu')}, simd {ver.get('simd')}, BLAS {ver['blas'].get('library')} core {ver['blas'].get('core')}")
print(f"brute-force {metric}: {n} x {d}, {nq} held-out queries, k {k}, {threads} threads")
print(f"  sgemm peak (bench_sgemm, same run, {threads} threads): {peak:.1f} GFLOP/s")
pct = 100.0 * rate / peak if peak > 0 else float("nan")
print(f"  vforge end to end: {vf:.3f} s = {rate:.1f} GFLOP/s (2*N*Q*d) = {pct:.1f} % of the sgemm peak (target >= 60 %)")
for f in fa:
    how = f"OPENBLAS_CORETYPE={f['coretype_env']}" if f["coretype_env"] else "its own core choice"
    print(f"  FAISS {f['faiss']} ({f['python']}, OpenBLAS core {f['core']}: {how}) IndexFlat add + search, data in RAM: {f['seconds']:.3f} s; "
          f"FAISS/vforge = {f['seconds'] / vf:.2f}x (target >= 1.5x)")
PY
