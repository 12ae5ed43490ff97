#!/usr/bin/env bash
# http(s):// corpora against the nginx stand-in: a single file by URL (rows identical to the
# local file, bare key = the URL's path), {i}-numbered parts (expanded while HEAD answers 200,
# stopping at the first 404; scan checksum identical to the local folder), https with the
# stand-in's CA, a missing URL (exit 2 naming it), a URL without {i} that is not a file, and
# nginx's Range-ignoring location (max_ranges 0; checked when the running stand-in has it).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "HF stand-in not running (VF_HF_ENDPOINT unset): skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/http-remote.XXXXXX" 2>/dev/null || mktemp -d)
repo="test-http-$$"
trap 'rm -rf "$tmp" "$VF_HF_ROOT/repos/vftest/$repo" "$VF_HF_ROOT/api/vftest/$repo"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
unset VFORGE_CA_BUNDLE
export VFORGE_REMOTE_RETRIES=2

mkdir -p "$tmp/repo/parts"
cp "$src/examples/corpus/rank00/batch_00000000.parquet" "$tmp/repo/parts/part-0.parquet"
cp "$src/examples/corpus/rank00/batch_00000001.parquet" "$tmp/repo/parts/part-1.parquet"
bash "$src/tests/services/hf/publish.sh" "$tmp/repo" vftest "$repo" || { echo "publish failed"; exit 1; }
base="$VF_HF_ENDPOINT/datasets/vftest/$repo/resolve/main"

# one file by URL
"$V" cat "$tmp/repo/parts/part-1.parquet" > "$tmp/l1.jsonl" 2>/dev/null
"$V" cat "$base/parts/part-1.parquet" > "$tmp/h1.jsonl" 2> "$tmp/err" || fail "http cat: $(cat "$tmp/err")"
[ -s "$tmp/l1.jsonl" ] && cmp -s "$tmp/l1.jsonl" "$tmp/h1.jsonl" && ok "http:// single file: rows identical" || fail "http single file differs"
"$V" inspect --json "$base/parts/part-1.parquet" > "$tmp/i1.json" 2>/dev/null
python3 - "$tmp/i1.json" "datasets/vftest/$repo/resolve/main/parts/part-1.parquet" <<'EOF' && ok "bare key = the URL's path" || fail "bare key"
import json, sys
d = json.load(open(sys.argv[1]))
assert [f["key"] for f in d["files"]] == [sys.argv[2]], d["files"][0]["key"]
EOF

# {i} parts
"$V" scan --json "$tmp/repo/parts" > "$tmp/ls.json" 2>/dev/null
"$V" scan --json "$base/parts/part-{i}.parquet" > "$tmp/hs.json" 2> "$tmp/err" || fail "{i} scan: $(cat "$tmp/err")"
python3 - "$tmp/ls.json" "$tmp/hs.json" <<'EOF' && ok "{i} parts: 2 files found, scan checksum identical to local" || fail "{i} parts"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["files"] == 2 and a["rows"] == b["rows"] and a["checksum"] == b["checksum"], (a, b)
EOF
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' --columns id "$base/parts/part-{i}.parquet" 2>/dev/null | head -1 > "$tmp/id.jsonl"
grep -q '"__id__"' "$tmp/id.jsonl" && ok "{i} parts: cat --with-id works" || fail "{i} cat --with-id"

# https with the stand-in's CA
tbase="$VF_HF_ENDPOINT_TLS/datasets/vftest/$repo/resolve/main"
VFORGE_CA_BUNDLE=$VF_HF_CA "$V" cat "$tbase/parts/part-1.parquet" > "$tmp/t1.jsonl" 2> "$tmp/err" || fail "https cat: $(cat "$tmp/err")"
cmp -s "$tmp/l1.jsonl" "$tmp/t1.jsonl" && ok "https:// with VFORGE_CA_BUNDLE: rows identical" || fail "https differs"
"$V" inspect "$tbase/parts/part-1.parquet" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -qi certificate "$tmp/err" && ok "https without the CA: refused" || fail "https without CA: rc=$rc"

# errors
"$V" inspect "$base/parts/nope.parquet" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nope.parquet" "$tmp/err" && grep -q "404" "$tmp/err" && ok "missing URL: exit 2: $(cut -c1-120 "$tmp/err")" || fail "missing URL: rc=$rc $(cat "$tmp/err")"
"$V" inspect "$base/nothing-{i}.parquet" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "part 0" "$tmp/err" && ok "{i} without part 0: exit 2" || fail "{i} missing: rc=$rc $(cat "$tmp/err")"

"$V" inspect "$base/parts/" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no directory listing" "$tmp/err" && ok "http:// directory URL: exit 2, no listing" || fail "http dir: rc=$rc $(cat "$tmp/err")"

# nginx location that ignores Range (tests/services/hf/nginx.conf.in: /norange/)
if curl -s -o /dev/null -w '%{http_code}' "$VF_HF_ENDPOINT/norange/datasets/vftest/$repo/resolve/main/parts/part-0.parquet" | grep -q 200; then
  "$V" inspect "$VF_HF_ENDPOINT/norange/datasets/vftest/$repo/resolve/main/parts/part-0.parquet" > /dev/null 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] && grep -q "ignored the Range header" "$tmp/err" && ok "nginx max_ranges 0: clear error" || fail "norange: rc=$rc $(cat "$tmp/err")"
else
  echo "note: the running stand-in predates the /norange/ location (covered by test_hf.sh's faults.js)"
fi

[ $fails -eq 0 ] && echo "all http remote checks passed" || echo "$fails check(s) failed"
[ $fails -eq 0 ]
