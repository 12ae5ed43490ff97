#!/usr/bin/env bash
# The measuring instruments of bench/ (issue 16) measure what they claim:
#  - bench/scan/decomp_bare walks every page of the column: its page-header bytes plus stored
#    bytes equal the column chunks' total_compressed_size and header plus uncompressed page bytes
#    equal total_uncompressed_size as pyarrow reads them from the footer, on files written by
#    pyarrow (v1 + dictionary + snappy, v2 + zstd, uncompressed, several row groups), DuckDB
#    (zstd, one page per ~100 MB) and polars, and parquet-testing's datapage_v2.snappy.parquet;
#    malformed input (truncated, not parquet, a corrupt page) is exit 2 with a message, no crash;
#  - bench/common/rusage_exec + benchlib.run_child report a child's own peak RSS (not the
#    harness's resident set the fork copied: a 300 MB parent running `true` must report < 60 MB)
#    and CPU, and a child that outlives its time limit is killed and reported as timed out;
#  - bench/scan/run.sh end to end on tiny files: every reader side runs, the checksums agree,
#    the targets and the summary table are printed;
#  - bench/load/run.sh end to end (discard, local load, local finalize rows), and a finalize that
#    outlives FINALIZE_TIMEOUT is killed and reported as timed out instead of hanging the run;
#  - bench/load/scale_local.sh end to end on a tiny corpus (discard and local rows, the ratio
#    against 2x, recall@10 through the store's index against brute-force's truth).
# Skips (77) without cc, the zstd/snappy headers or the pinned .venv.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
py=${VF_PY:-$src/.venv/bin/python}
command -v cc >/dev/null || { echo "SKIP: no cc"; exit 77; }
[ -x "$py" ] || { echo "SKIP: no pinned .venv python ($py)"; exit 77; }
"$py" -c 'import pyarrow, polars, duckdb' 2>/dev/null || { echo "SKIP: .venv lacks pyarrow/polars/duckdb"; exit 77; }
[ -f /usr/include/zstd.h ] && [ -f /usr/include/snappy-c.h ] || { echo "SKIP: no zstd/snappy headers"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bench-tools.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

cc -O2 -o "$tmp/decomp_bare" "$src/bench/scan/decomp_bare.c" -lzstd -lsnappy -lpthread || { echo "FAIL: decomp_bare does not compile"; exit 1; }

"$py" - "$tmp" <<'PY' || { echo "FAIL: fixtures"; exit 1; }
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq, polars as pl, duckdb
out = sys.argv[1]
n, d = 3000, 64
x = np.random.default_rng(1).random((n, d), dtype=np.float32)
t = pa.table({"id": np.arange(n, dtype=np.int64), "emb": pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), d)})
pq.write_table(t, f"{out}/pa_v1_snappy.parquet", data_page_size=64 << 10)
pq.write_table(t, f"{out}/pa_v2_zstd.parquet", data_page_version="2.0", compression="zstd", data_page_size=32 << 10)
pq.write_table(t, f"{out}/pa_none_rg.parquet", compression="none", use_dictionary=False, row_group_size=700,
               data_page_size=16 << 10, write_page_index=True)
con = duckdb.connect(); con.register("t", t)
con.execute(f"COPY (SELECT id, emb FROM t) TO '{out}/duckdb.parquet' (FORMAT parquet, COMPRESSION zstd)")
pl.DataFrame({"id": np.arange(n, dtype=np.int64), "emb": x}).write_parquet(f"{out}/polars.parquet")
PY

# walk FILE COLUMN: decomp_bare's byte accounting against the footer as pyarrow reads it
walk() {
  local f=$1 col=$2 name
  name=$(basename "$f")
  if ! "$tmp/decomp_bare" "$f" --column "$col" --threads 1,2 --repeat 1 > "$tmp/w.json" 2> "$tmp/w.err"; then
    fail "$name: decomp_bare exit $?: $(cat "$tmp/w.err")"; return
  fi
  local msg
  msg=$("$py" - "$f" "$col" "$tmp/w.json" <<'PY'
import json, sys, pyarrow.parquet as pq
f, col, w = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
m = pq.ParquetFile(f).metadata
tc = tu = 0
for g in range(m.num_row_groups):
    for c in range(m.row_group(g).num_columns):
        cc = m.row_group(g).column(c)
        if cc.path_in_schema.split(".")[0] == col:
            tc += cc.total_compressed_size
            tu += cc.total_uncompressed_size
bad = []
if w["header_bytes"] + w["stored_bytes"] != tc:
    bad.append(f"headers {w['header_bytes']} + stored {w['stored_bytes']} != total_compressed_size {tc}")
if w["header_bytes"] + w["page_bytes"] != tu:
    bad.append(f"headers {w['header_bytes']} + pages {w['page_bytes']} != total_uncompressed_size {tu}")
if w["row_groups"] != m.num_row_groups:
    bad.append(f"{w['row_groups']} row groups, footer has {m.num_row_groups}")
if sorted(w["seconds"]) != ["1", "2"] or w["pages"] < 1:
    bad.append(f"no timings / pages: {w}")
print("; ".join(bad) or f"{w['pages']} pages ({w['dict_pages']} dictionary), {w['codec']}, {m.num_row_groups} row group(s)")
PY
)
  case $msg in
    *"!="*|*"no timings"*|*"row groups,"*) fail "$name: $msg" ;;
    *) ok "decomp_bare $name: $msg" ;;
  esac
}
for f in pa_v1_snappy pa_v2_zstd pa_none_rg duckdb polars; do walk "$tmp/$f.parquet" emb; done
pt=${VF_SHARED:-$src/../shared}/data/parquet-testing/data/datapage_v2.snappy.parquet
if [ -f "$pt" ]; then walk "$pt" a; else echo "skip: parquet-testing not present ($pt)"; fi

# must-fail inputs: exit 2 with a message, never a crash
mustfail() {
  local what=$1 want=$2; shift 2
  "$tmp/decomp_bare" "$@" > /dev/null 2> "$tmp/mf.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q "$want" "$tmp/mf.err"; then ok "decomp_bare $what: exit 2, $(head -c 120 "$tmp/mf.err")"
  else fail "decomp_bare $what: exit $rc, want 2 and '$want': $(head -c 300 "$tmp/mf.err")"; fi
}
head -c 5000 "$tmp/pa_v1_snappy.parquet" > "$tmp/trunc.parquet"
mustfail "truncated file" "PAR1" "$tmp/trunc.parquet"
printf 'this is not parquet at all, just text\n' > "$tmp/text.parquet"
mustfail "not parquet" "not a parquet file" "$tmp/text.parquet"
mustfail "unknown column" "no column chunk" "$tmp/pa_v1_snappy.parquet" --column nosuch
# overwrite the first page header of emb with 0xff bytes: a malformed thrift struct
"$py" - "$tmp" <<'PY'
import sys, pyarrow.parquet as pq
out = sys.argv[1]
for name, fill in (("hdr", b"\xff" * 16), ("body", None)):
    src = f"{out}/pa_none_rg.parquet" if name == "hdr" else f"{out}/pa_v2_zstd.parquet"
    b = bytearray(open(src, "rb").read())
    cc = pq.ParquetFile(src).metadata.row_group(0).column(1)
    o = cc.dictionary_page_offset or cc.data_page_offset
    if fill:
        b[o:o + len(fill)] = fill
    else:  # inside the first zstd page body, past its header
        mid = o + 40
        b[mid:mid + 64] = bytes(64)
    open(f"{out}/bad_{name}.parquet", "wb").write(b)
PY
mustfail "corrupt page header" "offset" "$tmp/bad_hdr.parquet"
# a footer of a million nested lists: a bounded nesting depth, not a stack overflow
"$py" -c 'import struct, sys; f = bytes([0x19]) * 1000001; open(sys.argv[1], "wb").write(b"PAR1" + f + struct.pack("<I", len(f)) + b"PAR1")' "$tmp/deep.parquet"
mustfail "deeply nested footer" "nesting too deep" "$tmp/deep.parquet"
mustfail "corrupt zstd page" "decompress" "$tmp/bad_body.parquet"

# rusage_exec: the child's own RSS and CPU; the time limit
VF_BENCH_OUT="$tmp/out" "$py" - "$src" <<'PY' > "$tmp/ru.out" 2>&1
import sys, time
sys.path.insert(0, sys.argv[1] + "/bench/common")
import benchlib
ballast = bytearray(300 << 20)  # the harness is 300 MB resident when it forks
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
r = benchlib.run_child(["true"], 30)
print(f"true: rc {r.rc} rss {r.rss >> 20} MiB")
assert r.ok and r.rss < (60 << 20), f"peak RSS of `true` is {r.rss >> 20} MiB: the fork's copy of the harness"
r = benchlib.run_child([sys.executable, "-c", "b = bytearray(200 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1"], 60)
print(f"200 MB child: rc {r.rc} rss {r.rss >> 20} MiB cpu {r.cpu:.2f}")
assert r.ok and (200 << 20) <= r.rss < (300 << 20), r.rss
assert r.cpu > 0, r.cpu
t0 = time.monotonic()
r = benchlib.run_child(["sleep", "60"], 1)
print(f"sleep 60 with a 1 s limit: {r.why()} after {time.monotonic() - t0:.1f} s")
assert r.timed_out and not r.ok and time.monotonic() - t0 < 20
r = benchlib.run_child(["sh", "-c", "echo oops >&2; exit 3"], 10)
assert r.rc == 3 and "oops" in r.why(), r.why()
print("ok")
PY
if tail -1 "$tmp/ru.out" | grep -qx ok; then ok "rusage_exec / run_child: $(head -3 "$tmp/ru.out" | tr '\n' ';')"
else fail "rusage_exec / run_child: $(cat "$tmp/ru.out")"; fi

# the scan harness end to end, tiny: every side, checksums checked by the harness
readers=vforge,pyarrow,polars
[ -d "$src/tests/oracle/node_modules/@duckdb" ] && command -v node >/dev/null && readers=$readers,duckdb
if VF_BENCH_OUT="$tmp/out" DIM=16 RUNS=1 THREADS=1,2 TIMEOUT=120 READERS=$readers \
   FILES="duckdb_default_zstd spark_128m_uncompressed" bash "$src/bench/scan/run.sh" "$V" 300 > "$tmp/scan.out" 2>&1; then
  if grep -q FAILED "$tmp/scan.out"; then fail "bench/scan: a side failed: $(grep FAILED "$tmp/scan.out")"
  elif [ "$(grep -c '^| (' "$tmp/scan.out")" -ne 2 ]; then fail "bench/scan: no summary rows: $(tail -20 "$tmp/scan.out")"
  elif ! grep -q "within 1.25x of bare zstd 1t" "$tmp/scan.out" || ! grep -q "50 % of memcpy" "$tmp/scan.out" \
       || ! grep -q "peak RSS <= 64 MiB" "$tmp/scan.out" || ! grep -q "^cpu: .*blas: " "$tmp/scan.out"; then
    fail "bench/scan: targets or machine line missing: $(cat "$tmp/scan.out")"
  else ok "bench/scan end to end ($readers): $(grep -c '^  [a-z]* *[12] ' "$tmp/scan.out") reader rows"; fi
else
  fail "bench/scan/run.sh exit $?: $(tail -30 "$tmp/scan.out")"
fi

# the load harness end to end, tiny, and its time limit: a finalize that outlives it is killed
# and reported, the run finishes
if [ -d "$src/tests/oracle/node_modules/@duckdb" ] && command -v node >/dev/null; then
  if VF_BENCH_OUT="$tmp/out" RUNS=1 bash "$src/bench/load/run.sh" "$V" 3000 2 > "$tmp/load.out" 2>&1; then
    if grep -q '^discard  *3000 .*points per CPU-second' "$tmp/load.out" && grep -q '^local load  *3000 ' "$tmp/load.out" \
       && grep -q '^local finalize  ' "$tmp/load.out" && grep -q '^| local | .* s / .* MB |$' "$tmp/load.out"; then
      ok "bench/load end to end: $(grep -c '^discard\|^local' "$tmp/load.out") rows"
    else fail "bench/load: rows missing: $(cat "$tmp/load.out")"; fi
  else fail "bench/load/run.sh exit $?: $(tail -20 "$tmp/load.out")"; fi
  if VF_BENCH_OUT="$tmp/out" RUNS=2 STORES=local FINALIZE_TIMEOUT=0.001 bash "$src/bench/load/run.sh" "$V" 3000 2 > "$tmp/load2.out" 2>&1 \
     && grep -q '^local finalize   TIMEOUT  timed out after 0.001 s' "$tmp/load2.out" \
     && grep -q '^| local | .* | timed out after 0.001 s |$' "$tmp/load2.out"; then
    ok "bench/load: a finalize past its time limit is killed and reported"
  else fail "bench/load time limit: $(cat "$tmp/load2.out")"; fi
else echo "skip: bench/load (no node / tests/oracle/node_modules)"; fi

# the 1M x 768 local-vs-discard harness end to end, tiny (20,000 rows: the store indexes them)
if WORK="$tmp/sl" N=20000 DIM=32 NQ=20 ROUNDS=1 VFORGE="$V" VF_PY="$py" bash "$src/bench/load/scale_local.sh" \
     > "$tmp/sl.out" 2>&1; then
  if grep -q '^    1 this   discard  ' "$tmp/sl.out" && grep -q '^    1 this   local .* nlist 141, nprobe 16: read' "$tmp/sl.out" \
     && grep -q '^this: best wall discard .* local / discard .*x (target <= 2x: ' "$tmp/sl.out" \
     && grep -q '^this: held-out recall@10 at the default nprobe (20 queries; sq8 IVF index (20000 points' "$tmp/sl.out"; then
    ok "bench/load/scale_local.sh end to end: $(grep '^this: held-out' "$tmp/sl.out")"
  else fail "bench/load/scale_local.sh: rows missing: $(cat "$tmp/sl.out")"; fi
else fail "bench/load/scale_local.sh exit $?: $(tail -20 "$tmp/sl.out")"; fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all bench tool checks passed"
