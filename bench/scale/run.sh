#!/usr/bin/env bash
# Issue 17 item 6: the scale curve.  Synthetic clustered corpora of SIZES rows x DIM (default 1M and
# 4M x 768; 10M is added when WORK's disk has room for it and ADD_10M=1) from bench/scale/gen_scale.py
# (4096 Gaussian clusters of uneven sizes, seed SEED; generated once into WORK, outside git, and
# reused), NQ held-out queries of the same mixture.  For every N, under --memory-budget BUDGET:
#   - vforge brute-force (NQ queries, k 100, euclid): the exact ground truth;
#   - vforge index build sq8 and pq (nlist NLIST, pq m PQ_M): time and peak RSS
#     (bench/common/rusage_exec.c: the process's own ru_maxrss), k-means iterations;
#   - vforge index search at nprobe NPROBE: recall@10 against the truth;
#   - FAISS (pinned faiss-cpu of $VF_PY) IndexIVFScalarQuantizer / IndexIVFPQ, same nlist, M,
#     nprobe and threads on the same data: build time, peak RSS, recall@10 (faiss_scale.py);
# then prints the table, peak RSS against the budget, and t(N)/t(first N) for every step
# (target t(4M)/t(1M) <= 4.4, RSS <= budget, recall >= FAISS).  Paimon's vindex (10M x 768,
# 16 threads: PQ 142 s / 4.9 GiB, SQ 210 s / 12 GiB, recall@10 0.944 / 0.971 at nprobe 128) is
# printed beside it for reference only (another machine).
# Usage: bench/scale/run.sh ; env WORK (required: the data directory, e.g. /data/vf-scale),
#   SIZES ("1000000 4000000"), DIM (768), NQ (100), NLIST (4096), PQ_M (192), NPROBE (128),
#   BUDGET (2G), THREADS (nproc), TYPES ("sq8 pq"), FAISS (1: also run FAISS), ADD_10M (0), SEED (1),
#   BUILD, VFORGE.  A tiny check: WORK=/tmp/s SIZES="20000 40000" DIM=32 NLIST=64 PQ_M=8 NPROBE=8.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
V=${VFORGE:-$BUILD/vforge}
: "${WORK:?set WORK to a data directory outside git (the corpora are generated there once)}"
SIZES=${SIZES:-1000000 4000000}
DIM=${DIM:-768}
NQ=${NQ:-100}
NLIST=${NLIST:-4096}
PQ_M=${PQ_M:-192}
NPROBE=${NPROBE:-128}
BUDGET=${BUDGET:-2G}
THREADS=${THREADS:-$(nproc)}
TYPES=${TYPES:-sq8 pq}
FAISS=${FAISS:-1}
SEED=${SEED:-1}
VF_PY=${VF_PY:-$root/.venv/bin/python}
[ -x "$V" ] || { echo "no $V: build the project first"; exit 2; }
"$VF_PY" -c 'import numpy, pyarrow' 2>/dev/null || { echo "need numpy and pyarrow in $VF_PY"; exit 77; }
if [ "$FAISS" = 1 ] && ! "$VF_PY" -c 'import faiss' 2>/dev/null; then echo "no faiss in $VF_PY: FAISS=0"; FAISS=0; fi
mkdir -p "$WORK"
case "$(realpath "$WORK")/" in "$root"/*) echo "WORK must be outside the repository"; exit 2 ;; esac
if [ "${ADD_10M:-0}" = 1 ]; then
  need=$((10000000 * DIM * 4 * 3 / 1024))  # base + spill + index, KiB
  avail=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
  if [ "$avail" -gt "$need" ]; then SIZES="$SIZES 10000000"; else echo "skip 10M: $((avail / 1048576)) GiB free, need ~$((need / 1048576))"; fi
fi
rx="$WORK/rusage_exec"
[ -x "$rx" ] || cc -O2 -o "$rx" "$root/bench/common/rusage_exec.c"
res="$WORK/results-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
: > "$res"
# one measured step: NAME JSON_EXTRA -- command...; appends {"step", "n", rusage..., "seconds"}
step() {
  local name=$1 n=$2
  shift 3
  local t0 t1
  t0=$(date +%s.%N)
  "$rx" "$WORK/ru.json" -- "$@" > "$WORK/out.json"
  t1=$(date +%s.%N)
  "$VF_PY" - "$WORK/ru.json" "$name" "$n" "$(echo "$t1 - $t0" | bc -l)" "$WORK/out.json" >> "$res" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r.update(step=sys.argv[2], n=int(sys.argv[3]), seconds=float(sys.argv[4]))
try:  # index build --json: the k-means figures beside the time
    b = json.load(open(sys.argv[5]))
    r.update({k: b[k] for k in ("kmeans_iterations", "kmeans_max_iterations", "kmeans_rows", "peak_rss_bytes") if k in b})
except ValueError:
    pass
print(json.dumps(r))
PY
}
for n in $SIZES; do
  base="$WORK/clusters-$n-$DIM-s$SEED.npy" qnpy="$WORK/queries-$NQ-$DIM-s$SEED.npy"
  [ -f "$base" ] && [ -f "$qnpy" ] || { echo "== generating $n x $DIM"; "$VF_PY" "$here/gen_scale.py" "$base" "$qnpy" "$n" "$NQ" "$DIM" "$SEED"; }
  qdir="$WORK/queries-$NQ-$DIM-s$SEED"
  q="$qdir.parquet"
  if [ ! -f "$q" ]; then
    "$V" --quiet convert "$qnpy" --output "$qdir" --overwrite
    "$V" --quiet generate-queries "$qdir" -n "$NQ" --seed 1 --output "$q"
  fi
  gt="$WORK/gt-$n-$DIM-s$SEED-k100.parquet"
  echo "== $n x $DIM: brute-force ($NQ queries, k 100)"
  step brute-force "$n" -- "$V" --quiet --threads "$THREADS" --memory-budget "$BUDGET" brute-force "$base" --queries "$q" \
    -k 100 --metric euclid --output "$gt"
  for t in $TYPES; do
    ix="$WORK/ix-$n-$t.ivf"
    extra=""
    [ "$t" = pq ] && extra="--pq-m $PQ_M"
    echo "== $n x $DIM: index build $t (nlist $NLIST${extra:+, $extra}, --memory-budget $BUDGET)"
    step "build-$t" "$n" -- "$V" --quiet --threads "$THREADS" --memory-budget "$BUDGET" index build "$base" --output "$ix" \
      --type "$t" --nlist "$NLIST" --metric euclid $extra --spill-dir "$WORK" --json
    "$V" --quiet --threads "$THREADS" index search "$ix" --queries "$q" -k 10 --nprobe "$NPROBE" --ground-truth "$gt" \
      --output "$WORK/res.parquet" --json |
      "$VF_PY" -c 'import json,sys; r=json.load(sys.stdin); print(json.dumps({"step":"recall-"+sys.argv[1],"n":int(sys.argv[2]),"recall10":r["recall"],"qps":r["qps"]}))' "$t" "$n" >> "$res"
    rm -f "$ix"
    if [ "$FAISS" = 1 ]; then
      echo "== $n x $DIM: FAISS $t"
      "$rx" "$WORK/ru.json" -- "$VF_PY" "$here/faiss_scale.py" "$base" "$q" "$gt" "$t" "$NLIST" "$PQ_M" "$NPROBE" "$THREADS" > "$WORK/faiss.json"
      "$VF_PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); u=json.load(open(sys.argv[2])); r.update(step="faiss-"+sys.argv[3], n=int(sys.argv[4]), maxrss_kb=u["maxrss_kb"]); print(json.dumps(r))' \
        "$WORK/faiss.json" "$WORK/ru.json" "$t" "$n" >> "$res"
    fi
  done
done
"$VF_PY" - "$res" "$BUDGET" "$THREADS" "$V" <<'PY'
import json, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
budget_s, threads, v = sys.argv[2], int(sys.argv[3]), sys.argv[4]
mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
budget = int(float(budget_s[:-1]) * mult[budget_s[-1].upper()]) if budget_s[-1].upper() in mult else int(budget_s)
ver = json.loads(subprocess.run([v, "--threads", str(threads), "version", "--json"], capture_output=True, text=True).stdout or "{}")
print(f"cpu {ver.get('cpu')}, simd {ver.get('simd')}, BLAS core {ver.get('blas', {}).get('core')}, {threads} threads, budget {budget_s}")
by = {}
for r in rows:
    by.setdefault(r["step"], {})[r["n"]] = r
ns = sorted({r["n"] for r in rows})
print("%-16s" % "step" + "".join("%26s" % f"N={n}" for n in ns) + "   t(N)/t(N0)")
for s in sorted(by):
    cells, base = [], None
    for n in ns:
        r = by[s].get(n)
        if not r:
            cells.append("%26s" % "-"); continue
        if s.startswith("recall"):
            cells.append("%26s" % ("recall@10 %.4f" % r["recall10"])); continue
        sec = r.get("seconds", r.get("build_seconds"))
        rss = r["maxrss_kb"] * 1024
        flag = "" if s.startswith("faiss") or rss <= budget else " >budget"
        it = " %d it" % r["kmeans_iterations"] if "kmeans_iterations" in r else ""
        cells.append("%26s" % ("%.1f s %.2f GiB%s%s" % (sec, rss / 2**30, it, flag)))
        if s.startswith("faiss"):
            cells[-1] = "%26s" % ("%.1f s %.2f GiB r %.4f" % (sec, rss / 2**30, r["recall10"]))
    ratio = ""
    if not s.startswith("recall") and len(by[s]) > 1:
        t = [by[s][n].get("seconds", by[s][n].get("build_seconds")) for n in ns if n in by[s]]
        ratio = "   " + " ".join("%.2f" % (x / t[0]) for x in t[1:])
    print("%-16s" % s + "".join(cells) + ratio)
print("reference (another machine, 10M x 768, 16 threads): Paimon vindex PQ 142 s / 4.9 GiB, SQ 210 s / 12 GiB, "
      "recall@10 0.944 / 0.971 at nprobe 128")
print("results:", sys.argv[1])
PY
