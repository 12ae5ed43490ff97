#!/usr/bin/env bash
# Component dataset parts over HTTP (issue 8) from the nginx HF stand-in, with `cache: evict`:
# 6 npy vectors parts + 6 parquet payload parts of unequal sizes (a 250-row and a 10-row part
# early), sized with ranged reads of their headers/footers, downloaded one part ahead of the
# reader and deleted once read.  Checks: every point's vector and payload come from the same
# global row; the cache never held more than two parts (vforge's own accounting, from its debug
# log, and a `du -sb` probe sampling the cache directory); every part vforge downloaded is gone
# afterwards while hand-placed files in the cache directory (a part placed by hand and an
# unrelated file) are untouched; with `cache: keep` the downloads stay.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || {
  echo "the HF stand-in is not running (VF_HF_ENDPOINT/VF_HF_ROOT unset)"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy' 2>/dev/null || { echo "python3-numpy not installed"; exit 77; }
command -v node > /dev/null || { echo "node not installed (publish.sh needs it)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/dataset-http.XXXXXX" 2>/dev/null || mktemp -d)
ns=vftest repo=dataset-http-$$
probe_pid=
cleanup() {
  [ -n "$probe_pid" ] && kill "$probe_pid" 2> /dev/null
  rm -rf "$tmp" "$VF_HF_ROOT/repos/$ns/$repo" "$VF_HF_ROOT/api/$ns/$repo"
}
trap cleanup EXIT
gen="$src/tests/corpus/dataset_gen.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

sizes=4000,250,5000,10,4500,6240
total=20000
mkdir -p "$tmp/src" "$tmp/pub"
"$PY" "$gen" parts "$tmp/src" npy $sizes || { echo "FAIL: fixtures"; exit 1; }
for i in 0 1 2 3 4 5; do
  "$V" --quiet convert "$tmp/src/gidv_$i.npy" --labels "$tmp/src/gid_$i.npy" --output "$tmp/c$i" \
    --row-group-rows 4096 > /dev/null || { echo "FAIL: convert payload part $i"; exit 1; }
  mv "$tmp/c$i/batch_00000000.parquet" "$tmp/pub/meta_$i.parquet"
  cp "$tmp/src/emb_$i.npy" "$tmp/pub/"
done
bash "$src/tests/services/hf/publish.sh" "$tmp/pub" "$ns" "$repo" || { echo "FAIL: publish"; exit 1; }
base="$VF_HF_ENDPOINT/datasets/$ns/$repo/resolve/main"
curl -sf -r 0-9 "$base/emb_0.npy" -o /dev/null || { echo "FAIL: $base not served"; exit 1; }

# the most any two parts (vectors + payload) take on disk
bound=$("$PY" - "$tmp/pub" <<'EOF'
import os, sys
d = sys.argv[1]
s = [os.path.getsize(f"{d}/emb_{i}.npy") + os.path.getsize(f"{d}/meta_{i}.parquet") for i in range(6)]
s.sort()
print(s[-1] + s[-2])
EOF
)

# config NAME CACHE_DIR STORE CACHE_MODE
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, distance: euclid}
datasource:
  type: dataset
  vectors: {parts: {count: 6, path: "$2/emb_{i}.npy", link: "$base/emb_{i}.npy"}}
  payload: {parts: {count: 6, path: "$2/meta_{i}.parquet", link: "$base/meta_{i}.parquet"}, columns: [label]}
  cache: $4
  id_expression: row
vectorstore: {type: local, path: $3, collection_name: ds}
loader: {batch_size: 1000, prefetch_size: 4000, concurrency: 2}
EOC
}

# 1. evict, with hand-placed files in the cache directory
cache="$tmp/cache"
mkdir -p "$cache"
cp "$tmp/pub/emb_3.npy" "$cache/emb_3.npy"       # a part placed by hand
echo "keep me" > "$cache/notes.txt"
config ev "$cache" "$tmp/s1" evict
( peak=0
  while :; do
    n=$(du -sb --exclude=.parts-index "$cache" 2> /dev/null | cut -f1)
    [ -n "$n" ] && [ "$n" -gt "$peak" ] && { peak=$n; echo "$peak" > "$tmp/du.peak"; }
    sleep 0.005
  done ) &
probe_pid=$!
if VFORGE_DEBUG=1 "$V" load run "$tmp/ev.yaml" > "$tmp/ev.out" 2>&1; then
  kill "$probe_pid" 2> /dev/null; wait "$probe_pid" 2> /dev/null; probe_pid=
  if "$V" cat "$tmp/s1/ds" | "$PY" "$gen" check 0 $total payload > "$tmp/ev.chk"; then
    ok "over HTTP with cache: evict: $total points, vectors and payloads paired across 6 parts"
  else fail "http pairing: $(head -5 "$tmp/ev.chk")"; fi
  acct=$(grep -o '; [0-9]* bytes of downloaded parts on disk' "$tmp/ev.out" | grep -o '[0-9]*' | sort -n | tail -1)
  ndl=$(grep -c 'downloaded (' "$tmp/ev.out")
  nev=$(grep -c 'evicted' "$tmp/ev.out")
  dup=$(cat "$tmp/du.peak" 2> /dev/null || echo 0)
  hand=$(stat -c %s "$cache/emb_3.npy" 2> /dev/null || echo 0)
  echo "   downloads $ndl, evictions $nev, peak cache (accounting) ${acct:-?} B, du peak $dup B, two-part bound $bound B (+ hand-placed $hand B)"
  if [ -n "$acct" ] && [ "$acct" -le "$bound" ] && [ "$dup" -le $((bound + hand + 4096)) ] && [ "$ndl" -ge 6 ]; then
    ok "peak cache size stays within two parts"
  else fail "cache peak: accounting ${acct:-none}, du $dup, bound $bound, downloads $ndl"; fi
else
  kill "$probe_pid" 2> /dev/null; probe_pid=
  fail "load over HTTP: $(tail -5 "$tmp/ev.out")"
fi
left=$(cd "$cache" && ls -A | grep -v '^.parts-index$' | sort | tr '\n' ' ')
if [ "$left" = "emb_3.npy notes.txt " ] && cmp -s "$cache/emb_3.npy" "$tmp/pub/emb_3.npy"; then
  ok "every downloaded part was deleted; the hand-placed files are untouched ($left)"
else fail "cache directory after the load holds: '$left'"; fi

# 2. keep: the downloads stay (and a second run reads them without the network)
config kp "$tmp/cache2" "$tmp/s2" keep
if "$V" --quiet load run "$tmp/kp.yaml" > "$tmp/kp.out" 2>&1 &&
   [ "$(ls "$tmp/cache2/"emb_*.npy "$tmp/cache2/"meta_*.parquet | wc -l)" -eq 12 ]; then
  ok "cache: keep leaves the 12 downloaded files in place"
else fail "keep: $(tail -3 "$tmp/kp.out")"; fi

# 3. a broken link is reported with its URL
cat > "$tmp/bad.yaml" <<EOC
vectors:
  emb: {type: dense}
datasource:
  type: dataset
  vectors: {parts: {count: 2, path: "$tmp/cache3/x_{i}.npy", link: "$base/missing_{i}.npy"}}
vectorstore: {type: local, path: $tmp/s3, collection_name: ds}
EOC
"$V" --quiet load run "$tmp/bad.yaml" > "$tmp/bad.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "missing_0.npy" "$tmp/bad.out"; then ok "a missing remote part is an error naming its URL (exit $rc)"
else fail "missing remote part: exit $rc, $(tail -2 "$tmp/bad.out")"; fi

[ $fails -eq 0 ] && echo "all dataset HTTP checks passed" || echo "$fails dataset HTTP checks FAILED"
exit $((fails > 0))
