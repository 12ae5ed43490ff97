#!/usr/bin/env bash
# `vforge convert` (src/corpus/convert.c, src/cli/cmd_convert.c): .npy and IDX files into a parquet
# corpus in the DESIGN.md layout, read back with `vforge scan` / `vforge cat` and checked value by
# value against the source bytes (and with DuckDB when tests/oracle/node_modules is installed).
#   - hand-written .npy files (python3 struct; numpy is not needed): two sources of different
#     dtypes concatenated, split over files by --rows-per-file, ids = global rows;
#   - must-fail inputs: exit 2, the file named, nothing left in the output directory;
#   - an existing corpus is refused without --overwrite and replaced with it (stale files removed);
#   - Debian's dataset-fashion-mnist (when installed): the 10k test set with labels.
# Exit 77 (skipped) when the binary has no `convert` command registered.
set -uo pipefail
VFORGE=${VFORGE:?VFORGE must point at the vforge binary}
SRC=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
ORACLE="$SRC/tests/oracle"
FMNIST=${VF_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/converttest.XXXXXX" 2>/dev/null || mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then bad "exit $rc (want $want): $*"; sed 's/^/  | /' "$tmp/err" | head -5 >&2; return 1; fi
  ok
}
no_parquet() { [ -z "$(find "$1" -name '*.parquet' 2>/dev/null)" ]; }

if ! "$VFORGE" convert --help >/dev/null 2>&1; then
  echo "skip: $VFORGE has no 'convert' command" >&2
  exit 77
fi

# --- hand-written .npy files: a (5, 3) float32 and a (4, 3) float64, written like numpy does
python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
def npy(path, descr, shape, fmt, values, major=1):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    pre = 10 if major == 1 else 12
    h += " " * ((64 - (pre + len(h) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([major, 0]))
        f.write(struct.pack("<H" if major == 1 else "<I", len(h)))
        f.write(h.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
a = [i * 0.25 - 1.0 for i in range(15)]
b = [1.0 / (i + 3) for i in range(12)]          # not exact in float32: converted by rounding
npy(d + "/a.npy", "<f4", (5, 3), "f", a)
npy(d + "/b.npy", "<f8", (4, 3), "d", b, major=2)
npy(d + "/ids.npy", "<i8", (9,), "q", [7, 3, 1, 0, 2, 9, 4, 4, 5])
npy(d + "/ids_a.npy", "|u1", (5, 1), "B", [7, 3, 1, 0, 2])      # the same labels in two files
npy(d + "/ids_b.npy", "<i4", (4,), "i", [9, 4, 4, 5], major=3)
npy(d + "/wide.npy", "<f4", (2, 4), "f", [0.0] * 8)
npy(d + "/vec1d.npy", "<f4", (3,), "f", [1.0, 2.0, 3.0])
npy(d + "/short.npy", "<f4", (5, 3), "f", a)
with open(d + "/short.npy", "r+b") as f:   # drop the last 4 bytes
    f.seek(0, 2); n = f.tell(); f.truncate(n - 4)
import json
exp = [[struct.unpack("<f", struct.pack("<f", v))[0] for v in a[i*3:i*3+3]] for i in range(5)] + \
      [[struct.unpack("<f", struct.pack("<f", v))[0] for v in b[i*3:i*3+3]] for i in range(4)]
json.dump(exp, open(d + "/expected.json", "w"))
PY

out="$tmp/npycorpus"
expect_rc 0 "$VFORGE" convert "$tmp/a.npy" "$tmp/b.npy" --output "$out" --rows-per-file 4 --labels "$tmp/ids.npy" --json
python3 - "$tmp/out" <<'PY' || bad "convert --json summary"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] == 9 and d["dim"] == 3 and d["files"] == 3, d
PY
[ "$(cd "$out" && ls)" = "$(printf 'batch_00000000.parquet\nbatch_00000001.parquet\nbatch_00000002.parquet')" ] && ok || bad "batch file names: $(ls "$out")"
expect_rc 0 "$VFORGE" scan "$out" --json
python3 - "$tmp/out" "$tmp/expected.json" <<'PY' || bad "scan of the npy corpus"
import json, sys
d = json.load(open(sys.argv[1])); exp = json.load(open(sys.argv[2]))
assert d["rows"] == 9, d
want = sum(sum(r) for r in exp)
assert abs(d["checksum"] - want) < 1e-9, (d["checksum"], want)
PY
expect_rc 0 "$VFORGE" cat "$out" --limit 2
python3 - "$tmp/out" "$tmp/expected.json" <<'PY' || bad "cat --limit 2 of the npy corpus"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]; exp = json.load(open(sys.argv[2]))
assert len(rows) == 2, rows
for i, r in enumerate(rows):
    assert list(r) == ["id", "emb", "label"], r
    assert r["id"] == i and r["emb"] == exp[i], (r, exp[i])
assert rows[0]["label"] == 7 and rows[1]["label"] == 3, rows
PY
expect_rc 0 "$VFORGE" cat "$out"
python3 - "$tmp/out" "$tmp/expected.json" <<'PY' || bad "every row of the npy corpus (ids, f8 rounding, labels)"
import json, struct, sys
rows = [json.loads(l) for l in open(sys.argv[1])]; exp = json.load(open(sys.argv[2]))
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]   # cat prints 9 significant digits
assert [r["id"] for r in rows] == list(range(9)), rows
assert [[f32(v) for v in r["emb"]] for r in rows] == exp, rows
assert [r["label"] for r in rows] == [7, 3, 1, 0, 2, 9, 4, 4, 5]
PY
# label files are concatenated like the sources
expect_rc 0 "$VFORGE" convert "$tmp/a.npy" "$tmp/b.npy" --output "$tmp/split" --labels "$tmp/ids_a.npy,$tmp/ids_b.npy"
expect_rc 0 "$VFORGE" cat "$tmp/split" --columns label
[ "$(tr -d '\n' < "$tmp/out")" = '{"label":7}{"label":3}{"label":1}{"label":0}{"label":2}{"label":9}{"label":4}{"label":4}{"label":5}' ] && ok || bad "labels from two files: $(cat "$tmp/out")"
# the vector column name and the row-group size
expect_rc 0 "$VFORGE" convert "$tmp/a.npy" --output "$tmp/named" --vector-column dense --row-group-rows 2
expect_rc 0 "$VFORGE" inspect "$tmp/named" --json
python3 - "$tmp/out" <<'PY' || bad "--vector-column / --row-group-rows"
import json, sys
f = json.load(open(sys.argv[1]))["files"][0]
assert f["fields"] == ["id", "dense"], f["fields"]
assert f["rows"] == 5 and f["row_groups"] == 3, f
PY

# --- must-fail inputs: exit 2, the offending file named, no parquet file left behind
expect_rc 2 "$VFORGE" convert "$tmp/short.npy" --output "$tmp/f1" && grep -q 'short.npy' "$tmp/err" || bad "truncated npy named"
no_parquet "$tmp/f1" && ok || bad "truncated npy left files"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" "$tmp/wide.npy" --output "$tmp/f2" && grep -q 'wide.npy' "$tmp/err" && grep -q 'dimension' "$tmp/err" || bad "dimension mismatch named"
no_parquet "$tmp/f2" && ok || bad "dimension mismatch left files"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --labels "$tmp/ids.npy" --output "$tmp/f3" && grep -q '9 labels' "$tmp/err" && grep -q '5 vectors' "$tmp/err" || bad "label count mismatch"
no_parquet "$tmp/f3" && ok || bad "label mismatch left files"
expect_rc 2 "$VFORGE" convert "$tmp/vec1d.npy" --output "$tmp/f4" && grep -q 'vec1d.npy' "$tmp/err" || bad "1-D source named"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --labels "$tmp/b.npy" --output "$tmp/f5" && grep -q 'integers' "$tmp/err" || bad "float labels refused"
expect_rc 2 "$VFORGE" convert "$tmp/nope.npy" --output "$tmp/f6" && grep -q 'nope.npy' "$tmp/err" || bad "missing source named"
expect_rc 2 "$VFORGE" convert "$tmp/expected.json" --output "$tmp/f7" && grep -q 'expected.json' "$tmp/err" || bad "unknown format named"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" && grep -q -- '--output' "$tmp/err" || bad "--output required"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --output "$tmp/f8" --rows-per-file 0
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --output "$tmp/f8" --vector-column id

# --- an existing corpus: refused, then replaced with --overwrite (stale batch files removed)
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --output "$out" && grep -q -- '--overwrite' "$tmp/err" || bad "existing corpus refused"
[ "$(ls "$out" | wc -l)" -eq 3 ] && ok || bad "refused conversion touched the old corpus"
expect_rc 0 "$VFORGE" convert "$tmp/a.npy" --output "$out" --overwrite
[ "$(cd "$out" && ls)" = "batch_00000000.parquet" ] && ok || bad "--overwrite left: $(ls "$out")"
expect_rc 0 "$VFORGE" scan "$out" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rows"] == 5, d' "$tmp/out" || bad "overwritten corpus rows"
mkdir -p "$tmp/mixed" && cp "$out/batch_00000000.parquet" "$tmp/mixed/other.parquet"
expect_rc 2 "$VFORGE" convert "$tmp/a.npy" --output "$tmp/mixed" --overwrite && grep -q 'other.parquet' "$tmp/err" || bad "foreign parquet files refused"

# --- Fashion-MNIST (Debian dataset-fashion-mnist), test set with labels
if [ -f "$FMNIST/t10k-images-idx3-ubyte.gz" ] && [ -f "$FMNIST/t10k-labels-idx1-ubyte.gz" ]; then
  fm="$tmp/fmnist"
  expect_rc 0 "$VFORGE" convert "$FMNIST/t10k-images-idx3-ubyte.gz" --labels "$FMNIST/t10k-labels-idx1-ubyte.gz" \
      --output "$fm" --rows-per-file 4000 --json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert (d["rows"], d["dim"], d["files"]) == (10000, 784, 3), d' "$tmp/out" || bad "fashion-mnist summary"
  python3 - "$FMNIST" "$tmp" <<'PY'
import gzip, json, sys
src, tmp = sys.argv[1], sys.argv[2]
img = gzip.open(src + "/t10k-images-idx3-ubyte.gz").read()
lab = gzip.open(src + "/t10k-labels-idx1-ubyte.gz").read()
json.dump({"sum": sum(img[16:]), "rows": [list(img[16 + 784 * i:16 + 784 * (i + 1)]) for i in (0, 1, 4321, 9999)],
           "labels": list(lab[8:])}, open(tmp + "/fm.json", "w"))
PY
  expect_rc 0 "$VFORGE" scan "$fm" --json
  python3 - "$tmp/out" "$tmp/fm.json" <<'PY' || bad "fashion-mnist scan: rows and pixel checksum"
import json, sys
d = json.load(open(sys.argv[1])); ref = json.load(open(sys.argv[2]))
assert d["rows"] == 10000 and d["files"] == 3, d
assert d["checksum"] == ref["sum"], (d["checksum"], ref["sum"])
PY
  expect_rc 0 "$VFORGE" cat "$fm" --limit 2
  python3 - "$tmp/out" "$tmp/fm.json" <<'PY' || bad "fashion-mnist cat --limit 2 against the source bytes"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]; ref = json.load(open(sys.argv[2]))
assert len(rows) == 2
for i, r in enumerate(rows):
    assert r["id"] == i and len(r["emb"]) == 784 and r["emb"] == ref["rows"][i], i
    assert r["label"] == ref["labels"][i], (r["label"], ref["labels"][i])
PY
  expect_rc 0 "$VFORGE" cat "$fm" --offset 4321 --limit 1
  python3 - "$tmp/out" "$tmp/fm.json" <<'PY' || bad "fashion-mnist row 4321 (second file)"
import json, sys
r = json.loads(open(sys.argv[1]).readline()); ref = json.load(open(sys.argv[2]))
assert r["id"] == 4321 and r["emb"] == ref["rows"][2] and r["label"] == ref["labels"][4321], r["id"]
PY
  # DuckDB reads the same corpus: counts, dimensions, ids in file order, labels, a row's pixels
  if [ -d "$ORACLE/node_modules/@duckdb/node-api" ] && command -v node >/dev/null; then
    cat > "$tmp/q.cjs" <<'JS'
const { DuckDBInstance } = require(process.argv[2] + '/node_modules/@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
  const src = `read_parquet('${process.argv[3]}/*.parquet', filename=true, file_row_number=true)`;
  const [a] = await q(`select count(*) n, min(len(emb)) dmin, max(len(emb)) dmax, count(distinct id) ids,
      sum(label)::BIGINT lsum, sum(list_sum(emb))::DOUBLE psum from ${src}`);
  const [o] = await q(`select count(*) filter (where id <> rn) misplaced from
      (select id, row_number() over (order by filename, file_row_number) - 1 as rn from ${src})`);
  const [r] = await q(`select emb::FLOAT[] emb, label from ${src} where id = 9999`);
  const labels = (await q(`select label from ${src} order by id`)).map((x) => x.label);
  console.log(JSON.stringify({ ...a, ...o, row9999: r.emb, label9999: r.label, labels }));
})().catch((e) => { console.error(e); process.exit(1); });
JS
    if node "$tmp/q.cjs" "$ORACLE" "$fm" > "$tmp/duck.json" 2> "$tmp/duck.err"; then
      python3 - "$tmp/duck.json" "$tmp/fm.json" <<'PY' && ok || bad "DuckDB disagrees with the source (see above)"
import json, sys
d = json.load(open(sys.argv[1])); ref = json.load(open(sys.argv[2]))
num = lambda v: float(v)
assert int(d["n"]) == 10000 and int(d["dmin"]) == 784 and int(d["dmax"]) == 784, d
assert int(d["ids"]) == 10000 and int(d["misplaced"]) == 0, d
assert int(d["lsum"]) == sum(ref["labels"]) and d["labels"] == ref["labels"]
assert num(d["psum"]) == ref["sum"], (d["psum"], ref["sum"])
assert [num(v) for v in d["row9999"]] == ref["rows"][3] and d["label9999"] == ref["labels"][9999]
PY
    else
      bad "DuckDB could not read the converted corpus"; sed 's/^/  | /' "$tmp/duck.err" | head -5 >&2
    fi
  else
    echo "note: DuckDB oracle not installed (tests/oracle/node_modules); skipped that check" >&2
  fi
else
  echo "note: $FMNIST not present (apt-get install dataset-fashion-mnist); Fashion-MNIST checks skipped" >&2
fi

echo "test_convert: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
