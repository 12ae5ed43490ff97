#!/usr/bin/env bash
# Issue 16, item 2: a large row group is streamed page by page into reused buffers by default
# (no --memory-budget), and the results do not depend on how it is sliced.
#  a. scan of one 20,000 x 768 zstd row group (1 MiB pages) peaks at <= 64 MiB + 2 x the largest
#     page + one 8 MiB slice (held whole, the chunk and its decoded floats alone are ~118 MB)
#  b. the same with ~24 MiB pages (DuckDB-like: few huge pages, each decoded once, kept while it
#     straddles slices): <= 64 MiB + 2 x the largest page + one slice
#  c. brute-force and generate-queries of the one-row-group file stay under the same bound
#  d. scan's checksum equals its definition (per row group as written: 4 accumulators, value i
#     into i % 4 while a group of 4 remains, the tail into the first; row groups added in order),
#     computed by numpy, at --threads 1, 2 and 3 (pages read ahead by other threads) and under
#     --memory-budget 64M (other slices)
#  e. brute-force output is byte-identical by default, at --threads 2 and under --memory-budget
#  f. cat of rows around slice and page boundaries equals pyarrow's values
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -x "$PY" ] && "$PY" -c 'import pyarrow, numpy' 2> /dev/null || { echo "skip: no python with pyarrow (VF_PY)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/stream-read.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$PY" - "$tmp" <<'EOF' || { echo "FAIL: writing the test files"; exit 1; }
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
rng = np.random.default_rng(16)
def table(n, dim):
    v = rng.standard_normal((n, dim)).astype("float32")
    emb = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)
    return pa.table({"id": pa.array(np.arange(n, dtype="int64")), "emb": emb})
t = table(20000, 768)
pq.write_table(t, f"{d}/small_pages.parquet", row_group_size=20000, compression="zstd",
               data_page_size=1 << 20)
pq.write_table(t, f"{d}/big_pages.parquet", row_group_size=20000, compression="zstd",
               data_page_size=24 << 20, use_dictionary=False)
pq.write_table(table(3001, 33), f"{d}/multi.parquet", row_group_size=700, compression="snappy")
EOF

# checksum as defined (README "scan"), and the largest page's uncompressed size
expect() {
  "$PY" - "$1" <<'EOF'
import sys, numpy as np, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
total = 0.0
for g in range(f.num_row_groups):
    v = f.read_row_group(g, columns=["emb"]).column("emb").combine_chunks().flatten()
    v = v.to_numpy().astype(np.float64)
    full = len(v) - len(v) % 4
    a = [float(np.cumsum(v[k:full:4])[-1]) if full else 0.0 for k in range(4)]
    for x in v[full:]:
        a[0] += float(x)
    total += (a[0] + a[1]) + (a[2] + a[3])
print(repr(total))
EOF
}
# sanitizers (shadow memory, quarantine) inflate RSS: the bounds are then not checked
sanitized=
if [ -n "${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}" ] || nm "$V" 2>/dev/null | grep -q '__asan_init\|__ubsan'; then
  sanitized=1
fi
# peak LABEL BOUND CMD...: run CMD (--json) and check its peak_rss_bytes <= BOUND
peak() {
  local label=$1 bound=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err" || { fail "$label: exit $? ($(tail -c 300 "$tmp/err"))"; return; }
  [ -z "$sanitized" ] || { ok "$label: ran (peak RSS not checked under sanitizers)"; return; }
  local p
  p=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_rss_bytes"])' "$tmp/out") ||
    { fail "$label: no peak_rss_bytes in $(head -c 300 "$tmp/out")"; return; }
  if [ "$p" -le "$bound" ]; then ok "$label: peak RSS $p <= $bound bytes"
  else fail "$label: peak RSS $p > $bound bytes"; fi
}
checksum() { "$PY" -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["checksum"]))' "$tmp/out"; }

# the largest page's uncompressed size, from the emb chunk's page headers (pyarrow lists none)
page_max() {
  "$PY" - "$1" <<'EOF'
# thrift compact PageHeader: field 2 uncompressed_page_size, field 3 compressed_page_size
import sys, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
c = f.metadata.row_group(0).column(1)
start = c.dictionary_page_offset or c.data_page_offset
if c.dictionary_page_offset is None or c.dictionary_page_offset <= 0: start = c.data_page_offset
end = start + c.total_compressed_size
data = open(sys.argv[1], "rb").read()
def varint(p):
    r = s = 0
    while True:
        b = data[p]; p += 1
        r |= (b & 0x7f) << s; s += 7
        if not b & 0x80: return r, p
def zz(n): return (n >> 1) ^ -(n & 1)
def skip(p, t):
    if t in (1, 2): return p
    if t == 3: return p + 1
    if t in (4, 5, 6): return varint(p)[1]
    if t == 7: return p + 8
    if t == 8:
        n, p = varint(p); return p + n
    if t in (9, 10):
        h = data[p]; p += 1; n = h >> 4; et = h & 15
        if n == 15: n, p = varint(p)
        for _ in range(n): p = skip(p, et)
        return p
    if t == 12:
        fid = 0
        while True:
            h = data[p]; p += 1
            if h == 0: return p
            d = h >> 4; tt = h & 15
            if d == 0:
                fid, p = varint(p)
            p = skip(p, tt)
    raise SystemExit("type %d" % t)
best = 0
p = start
while p < end:
    fid = 0; usize = csize = 0
    while True:
        h = data[p]; p += 1
        if h == 0: break
        d = h >> 4; t = h & 15
        if d: fid += d
        else: v, p = varint(p); fid = zz(v)
        if fid in (2, 3) and t == 5:
            v, p = varint(p); v = zz(v)
            if fid == 2: usize = v
            else: csize = v
        else:
            p = skip(p, t)
    best = max(best, usize)
    p += csize
print(best)
EOF
}

MiB=$((1 << 20))
for f in small_pages big_pages; do
  pm=$(page_max "$tmp/$f.parquet") || { fail "$f: page sizes"; continue; }
  bound=$((64 * MiB + 2 * pm + 8 * MiB))
  echo "info: $f: largest page $pm bytes, bound $bound"
  peak "a/b: scan $f, 1 thread" "$bound" "$V" --quiet --threads 1 scan "$tmp/$f.parquet" --columns emb --json
  # 2 threads on one row group: pages read ahead by 2 reader threads (3 page slots), within
  # 64 MiB + per thread 2 x the largest page + one slice
  bound2=$((64 * MiB + 2 * 2 * pm + 8 * MiB))
  peak "a/b: scan $f, 2 threads (read-ahead)" "$bound2" "$V" --quiet --threads 2 scan "$tmp/$f.parquet" --columns emb --json
done
pm=$(page_max "$tmp/small_pages.parquet")
bound=$((64 * MiB + 2 * pm + 8 * MiB))
peak "c: generate-queries" "$bound" "$V" --quiet --threads 1 generate-queries "$tmp/small_pages.parquet" -n 20 --seed 3 --output "$tmp/q.parquet" --json
peak "c: brute-force" "$bound" "$V" --quiet --threads 1 brute-force "$tmp/small_pages.parquet" --queries "$tmp/q.parquet" -k 10 --metric euclid --output "$tmp/gt.parquet" --json

# d. the checksum
for f in small_pages big_pages multi; do
  want=$(expect "$tmp/$f.parquet") || { fail "d: $f: numpy"; continue; }
  for args in "--threads 1" "--threads 2" "--threads 3" "--threads 2 --memory-budget 64M"; do
    # shellcheck disable=SC2086
    "$V" --quiet $args scan "$tmp/$f.parquet" --columns emb --json > "$tmp/out" 2> "$tmp/err" ||
      { fail "d: $f $args: exit $?"; continue; }
    got=$(checksum)
    [ "$got" = "$want" ] && ok "d: $f $args: checksum $got as defined" ||
      fail "d: $f $args: checksum $got, defined as $want"
  done
done

# e. brute-force output does not depend on slicing or threads
cp "$tmp/gt.parquet" "$tmp/gt_default.parquet"
"$V" --quiet --threads 1 --memory-budget 64M brute-force "$tmp/small_pages.parquet" --queries "$tmp/q.parquet" -k 10 --metric euclid --output "$tmp/gt_budget.parquet" 2> "$tmp/err" ||
  fail "e: brute-force under --memory-budget: $(tail -c 300 "$tmp/err")"
"$V" --quiet --threads 2 brute-force "$tmp/small_pages.parquet" --queries "$tmp/q.parquet" -k 10 --metric euclid --output "$tmp/gt_t2.parquet" 2> "$tmp/err" ||
  fail "e: brute-force --threads 2: $(tail -c 300 "$tmp/err")"
cmp -s "$tmp/gt_default.parquet" "$tmp/gt_budget.parquet" && cmp -s "$tmp/gt_default.parquet" "$tmp/gt_t2.parquet" &&
  ok "e: brute-force output identical (default, --memory-budget 64M, --threads 2)" ||
  fail "e: brute-force output differs with slicing or threads"

# f. cat of rows around slice and page boundaries equals pyarrow's values (float32, exactly)
for f in small_pages big_pages; do
  : > "$tmp/rows"
  for o in 0 2687 2688 2751 2752 8190 8191 8192 13055 13056 19998; do
    "$V" --quiet cat "$tmp/$f.parquet" --offset $o --limit 2 >> "$tmp/rows" 2> "$tmp/err" ||
      fail "f: $f: cat --offset $o: $(tail -c 300 "$tmp/err")"
  done
  "$PY" - "$tmp/$f.parquet" "$tmp/rows" <<'EOF2' && ok "f: $f: 22 rows at slice/page boundaries equal pyarrow's" || fail "f: $f: cat rows differ from pyarrow"
import json, sys, numpy as np, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
ids = t.column("id").to_numpy()
emb = t.column("emb").combine_chunks().flatten().to_numpy().reshape(len(ids), -1)
rows = [json.loads(l) for l in open(sys.argv[2])]
assert len(rows) == 22, len(rows)
for r in rows:
    i = r["id"]
    assert ids[i] == i
    got = np.array(r["emb"], dtype=np.float64).astype(np.float32)
    assert np.array_equal(got, emb[i]), i
EOF2
done

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
