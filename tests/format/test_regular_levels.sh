#!/usr/bin/env bash
# Issue 16 item 4: the level fast paths of the page decoder (src/format/pqt_reader.c) against
# pyarrow.  A page whose definition levels are one RLE run of the maximum is neither written nor
# counted, and a page whose repetition levels are regular (R records of D entries: zeros exactly
# at 0, D, 2D, ...) finds its slice boundaries and record counts by arithmetic.  Each file below
# is read whole and in small slices (--memory-budget: a slice straddles pages and a page
# straddles slices), and every row `cat` prints must equal pyarrow's, including the cases the
# fast paths must NOT take:
#   regular       FixedSizeList(float, 12), no nulls: both fast paths
#   null_list     one null list among regular ones (def < list level, rep not regular)
#   short_list    one row of 11 values among rows of 12
#   same_mean     one page: a row of 13, rows of 12, a row of 11: n = 12 x rows, zeros off 12k
#   null_elem     a null element inside a list (def = max - 1), an empty list (def = list level)
#   all_null      every list null: def one RLE run of a value below the maximum
#   split_pages   v1 pages of ~1 KiB with lists of 300 values: records split across pages
#   v2_pages      data page v2, regular lists
#   nested        list<list<float>>, 3 lists of 4 per row: zeros regular, the other levels 1 and 2
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -x "$PY" ] && "$PY" -c 'import pyarrow, numpy' 2> /dev/null || { echo "skip: no python with pyarrow (VF_PY)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/regular-levels.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$PY" - "$tmp" <<'EOF' || { echo "FAIL: writing the test files"; exit 1; }
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
rng = np.random.default_rng(164)
N = 6000
def vals(k):
    return rng.standard_normal(k).astype("float32")
def lists(lengths, null_rows=(), null_elems=()):
    out = []
    for i, k in enumerate(lengths):
        if i in null_rows:
            out.append(None)
            continue
        v = [float(x) for x in vals(k)]
        for (r, p) in null_elems:
            if r == i:
                v[p] = None
        out.append(v)
    return pa.array(out, type=pa.list_(pa.float32()))
def write(name, emb, **kw):
    t = pa.table({"id": pa.array(np.arange(len(emb), dtype="int64")), "emb": emb})
    kw.setdefault("row_group_size", N)
    kw.setdefault("compression", "zstd")
    kw.setdefault("use_dictionary", False)
    pq.write_table(t, f"{d}/{name}.parquet", **kw)
fixed = pa.FixedSizeListArray.from_arrays(pa.array(vals(N * 12)), 12)
write("regular", fixed, data_page_size=64 << 10)
write("null_list", lists([12] * N, null_rows={2500}), data_page_size=64 << 10)
write("short_list", lists([12] * 2500 + [11] + [12] * (N - 2501)), data_page_size=64 << 10)
write("same_mean", lists([13] + [12] * (N - 2) + [11]), data_page_size=8 << 20)
write("null_elem", lists([12] * 3000 + [0] + [12] * (N - 3001), null_elems=[(1200, 5)]),
      data_page_size=64 << 10)
write("all_null", lists([12] * 500, null_rows=set(range(500))), row_group_size=500)
write("split_pages", lists([300] * 800), row_group_size=800, data_page_size=1 << 10,
      write_batch_size=16)
write("v2_pages", fixed, data_page_size=64 << 10, data_page_version="2.0")
nested = [[[float(x) for x in vals(4)] for _ in range(3)] for _ in range(N)]
write("nested", pa.array(nested, type=pa.list_(pa.list_(pa.float32()))), data_page_size=64 << 10)
EOF

files="regular null_list short_list same_mean null_elem all_null split_pages v2_pages nested"
for f in $files; do
  "$V" --quiet cat "$tmp/$f.parquet" > "$tmp/$f.whole" 2> "$tmp/err" ||
    fail "$f whole: cat exit $?: $(tail -c 300 "$tmp/err")"
  "$V" --quiet --memory-budget 2M cat "$tmp/$f.parquet" > "$tmp/$f.sliced" 2> "$tmp/err" ||
    fail "$f sliced: cat exit $?: $(tail -c 300 "$tmp/err")"
done
# shellcheck disable=SC2086
"$PY" - "$tmp" $files <<'EOF2' || fail "cat rows differ from pyarrow"
import json, sys, numpy as np, pyarrow.parquet as pq
d, bad = sys.argv[1], 0
def same(i, g, w):  # JSON value g as cat prints it, w as pyarrow reads it; floats as float32
    if w is None or g is None:
        assert g is None and w is None, (i, g, w)
    elif isinstance(w, list):
        assert isinstance(g, list) and len(g) == len(w), (i, g, w)
        for a, b in zip(g, w):
            same(i, a, b)
    else:
        assert np.float32(g) == np.float32(w), (i, g, w)
for f in sys.argv[2:]:
    t = pq.read_table(f"{d}/{f}.parquet").to_pylist()
    for mode in ("whole", "sliced"):
        try:
            rows = [json.loads(l) for l in open(f"{d}/{f}.{mode}")]
            assert len(rows) == len(t), (len(rows), len(t))
            for i, (g, w) in enumerate(zip(rows, t)):
                assert g["id"] == w["id"] == i, i
                same(i, g.get("emb"), w["emb"])
            print(f"ok: {f} {mode}: every row equals pyarrow's")
        except AssertionError as e:
            print(f"FAIL: {f} {mode}: row differs from pyarrow: {str(e)[:200]}")
            bad += 1
sys.exit(1 if bad else 0)
EOF2

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
