#!/usr/bin/env bash
# Component datasets on local files (issue 8): npy / fbin vectors + parquet payload parts of
# unequal sizes (a 3-row and a 1-row part early in the sequence), loaded into the local store
# and checked point by point: every point's vector and payload come from the same global row
# (the vectors tell their row), ids are the global rows (id_expression: row).  Also --offset/-n
# on the global row space, an offset past the end, mismatched component lengths (error naming
# both files and counts), the parts index (written, then a changed part is refused with how to
# refresh it), and a vectors-only fbin dataset.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy' 2>/dev/null || { echo "python3-numpy not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/dataset-test.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen="$src/tests/corpus/dataset_gen.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

sizes=50,3,120,1,77   # 251 rows; short parts early
total=251
mkdir -p "$tmp/p"
"$PY" "$gen" parts "$tmp/p" npy $sizes || { echo "FAIL: fixture generation"; exit 1; }
"$PY" "$gen" parts "$tmp/p" fbin $sizes || { echo "FAIL: fixture generation"; exit 1; }
# payload parts: parquet with `label` = the global row (several row groups per part)
for i in 0 1 2 3 4; do
  "$V" --quiet convert "$tmp/p/gidv_$i.npy" --labels "$tmp/p/gid_$i.npy" --output "$tmp/c$i" \
    --row-group-rows 16 > /dev/null || { echo "FAIL: convert payload part $i"; exit 1; }
  mv "$tmp/c$i/batch_00000000.parquet" "$tmp/p/meta_$i.parquet"
done

# config NAME STORE VECTORS_PARTS [PAYLOAD_LINE]
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, distance: euclid}
datasource:
  type: dataset
  vectors: {parts: {count: 5, start: 0, path: "$3"}}
${4:-}
  id_expression: row
vectorstore: {type: local, path: $2, collection_name: ds}
loader: {batch_size: 40, prefetch_size: 100, concurrency: 2}
EOC
}
PAY="  payload: {format: parquet, parts: {count: 5, path: \"$tmp/p/meta_{i}.parquet\"}, columns: [label]}"

# 1. npy + payload, every part
config a "$tmp/sa" "$tmp/p/emb_{i}.npy" "$PAY"
if "$V" --quiet load run "$tmp/a.yaml" > "$tmp/a.out" 2>&1; then
  if "$V" cat "$tmp/sa/ds" | "$PY" "$gen" check 0 $total payload > "$tmp/a.chk"; then
    ok "npy + parquet payload: $total points, vectors and payloads paired across every part boundary"
  else fail "npy pairing: $(head -5 "$tmp/a.chk")"; fi
else fail "load npy dataset: $(tail -3 "$tmp/a.out")"; fi
ls "$tmp/p/.parts-index/"*.json > /dev/null 2>&1 && ok "parts index written" ||
  fail "no parts index in $tmp/p/.parts-index"

# 2. --offset / -n on the global row space (offset inside part 2, range crossing into part 4)
config b "$tmp/sb" "$tmp/p/emb_{i}.npy" "$PAY"
if "$V" --quiet load run "$tmp/b.yaml" --offset 60 -n 150 > "$tmp/b.out" 2>&1 &&
   "$V" cat "$tmp/sb/ds" | "$PY" "$gen" check 60 150 payload > "$tmp/b.chk"; then
  ok "--offset 60 -n 150 loads global rows 60..209"
else fail "offset/limit: $(tail -3 "$tmp/b.out") $(head -3 "$tmp/b.chk" 2>/dev/null)"; fi
config b2 "$tmp/sb2" "$tmp/p/emb_{i}.npy" "$PAY"
if "$V" --quiet load run "$tmp/b2.yaml" --offset 240 -n 1000 > "$tmp/b2.out" 2>&1 &&
   "$V" cat "$tmp/sb2/ds" | "$PY" "$gen" check 240 11 payload > "$tmp/b2.chk"; then
  ok "-n is capped by the rows remaining (offset 240: 11 rows)"
else fail "-n cap: $(tail -3 "$tmp/b2.out") $(head -3 "$tmp/b2.chk" 2>/dev/null)"; fi
config b3 "$tmp/sb3" "$tmp/p/emb_{i}.npy" "$PAY"
"$V" --quiet load run "$tmp/b3.yaml" --offset 251 > "$tmp/b3.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "past the end" "$tmp/b3.out"; then ok "offset past the end is an error (exit $rc)"
else fail "offset 251 of 251 rows: exit $rc, $(tail -2 "$tmp/b3.out")"; fi

# 3. fbin vectors, no payload
config c "$tmp/sc" "$tmp/p/emb_{i}.fbin"
if "$V" --quiet load run "$tmp/c.yaml" > "$tmp/c.out" 2>&1 &&
   "$V" cat "$tmp/sc/ds" | "$PY" "$gen" check 0 $total > "$tmp/c.chk"; then
  ok "fbin vectors-only dataset: $total points, id = global row"
else fail "fbin dataset: $(tail -3 "$tmp/c.out") $(head -3 "$tmp/c.chk" 2>/dev/null)"; fi

# 4. mismatched component lengths: payload part 2 of 119 rows against 120 vectors
mkdir -p "$tmp/m"
cp "$tmp/p/"emb_*.npy "$tmp/m/"
cp "$tmp/p/"meta_*.parquet "$tmp/m/"
"$PY" -c "import numpy as np; np.save('$tmp/m/g2.npy', np.arange(54, 173, dtype='<i4')); np.save('$tmp/m/g2v.npy', np.arange(54, 173, dtype='<f4').reshape(119, 1))"
"$V" --quiet convert "$tmp/m/g2v.npy" --labels "$tmp/m/g2.npy" --output "$tmp/cm" > /dev/null
mv "$tmp/cm/batch_00000000.parquet" "$tmp/m/meta_2.parquet"
config d "$tmp/sd" "$tmp/m/emb_{i}.npy" "  payload: {parts: {count: 5, path: \"$tmp/m/meta_{i}.parquet\"}, columns: [label]}"
"$V" --quiet load run "$tmp/d.yaml" > "$tmp/d.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "emb_2.npy has 120 rows" "$tmp/d.out" && grep -q "meta_2.parquet has 119" "$tmp/d.out"; then
  ok "mismatched lengths refused naming both files: $(grep -o 'dataset part 2.*has 119' "$tmp/d.out" | head -1)"
else fail "mismatch: exit $rc, $(tail -2 "$tmp/d.out")"; fi
[ -d "$tmp/sd/ds" ] && [ -n "$(ls "$tmp/sd/ds/"seg-* 2>/dev/null)" ] && fail "mismatch wrote points"

# 5. a part that changed after it was indexed: refused, naming the index file to delete
"$PY" -c "
import numpy as np
a = np.array([[g, g + 0.5, -g, 1.25] for g in range(50, 54)], dtype='<f4'); np.save('$tmp/p/emb_1.npy', a)"
config e2 "$tmp/se2" "$tmp/p/emb_{i}.npy" "$PAY"
"$V" --quiet load run "$tmp/e2.yaml" > "$tmp/e2.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "delete .*parts-index" "$tmp/e2.out"; then
  ok "a part whose size differs from the parts index is refused: $(grep -o 'has 4 rows.*' "$tmp/e2.out" | head -c 200)"
else fail "changed part: exit $rc, $(tail -2 "$tmp/e2.out")"; fi
rm -f "$tmp/p/.parts-index/"*.json
config e3 "$tmp/se3" "$tmp/p/emb_{i}.npy" "$PAY"
"$V" --quiet load run "$tmp/e3.yaml" > "$tmp/e3.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "emb_1.npy has 4 rows but the payload file .*meta_1.parquet has 3" "$tmp/e3.out"; then
  ok "after deleting the index the parts are re-measured (and the now unequal part 1 is refused)"
else fail "re-measure: exit $rc, $(tail -2 "$tmp/e3.out")"; fi

# 6. a missing part without a link
config f "$tmp/sf" "$tmp/p/nope_{i}.npy"
"$V" --quiet load run "$tmp/f.yaml" > "$tmp/f.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "nope_0.npy does not exist" "$tmp/f.out"; then ok "missing part refused (exit $rc)"
else fail "missing part: exit $rc, $(tail -2 "$tmp/f.out")"; fi

[ $fails -eq 0 ] && echo "all dataset checks passed" || echo "$fails dataset checks FAILED"
exit $((fails > 0))
