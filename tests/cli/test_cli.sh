#!/usr/bin/env bash
# The command-line contract of DESIGN.md for inspect / cat / scan: stdout carries data only,
# exit codes (0 ok, 2 bad usage or bad data), errors name the file, ids from physical rows.
set -uo pipefail
VFORGE=${VFORGE:?VFORGE must point at the vforge binary}
SRC=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/clitest.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus="$SRC/examples/corpus"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect_rc WANT CMD... : run, check the exit code, keep stdout/stderr in $tmp/out $tmp/err
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then bad "exit $rc (want $want): $*"; sed 's/^/  | /' "$tmp/err" | head -5 >&2; return 1; fi
  ok
}
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }
md5id() { local h; h=$(printf '%s' "$1" | md5sum | cut -c1-32); echo "${h:0:8}-${h:8:4}-${h:12:4}-${h:16:4}-${h:20:12}"; }

# --- basics
expect_rc 0 "$VFORGE" version && grep -q '^vforge ' "$tmp/out" || bad "version output"
for c in inspect cat scan; do
  expect_rc 0 "$VFORGE" "$c" --help && grep -q "usage: vforge $c" "$tmp/out" || bad "$c --help"
done
expect_rc 2 "$VFORGE" nosuchcommand
expect_rc 2 "$VFORGE" cat "$corpus" --no-such-option && grep -q -- '--no-such-option' "$tmp/err" || bad "unknown option named"
expect_rc 2 "$VFORGE" cat "$corpus" --limit abc && grep -q -- '--limit' "$tmp/err" || bad "--limit abc named"
expect_rc 2 "$VFORGE" cat
expect_rc 2 "$VFORGE" inspect "$tmp/does-not-exist.parquet" && grep -q 'does-not-exist.parquet' "$tmp/err" || bad "missing file named"

# --- inspect
expect_rc 0 "$VFORGE" inspect "$corpus" --json
json_ok "$tmp/out" || bad "inspect --json is not one JSON object"
python3 - "$tmp/out" <<'PY' || bad "inspect --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["total_files"] == 2 and d["total_rows"] == 6000, d
f = d["files"][0]
assert f["rows"] == 3000 and f["row_groups"] == 2 and f["row_group_rows"] == [2048, 952] and f["key"].endswith("rank00/batch_00000000.parquet"), f
cols = {c["path"]: c for c in f["columns"]}
assert cols["emb.list.element"]["physical"] == "FLOAT" and cols["emb.list.element"]["max_rep"] == 1, cols
assert "ZSTD" in cols["id"]["codecs"], cols["id"]
assert f["fields"] == ["id", "emb", "text", "meta"], f["fields"]
PY
expect_rc 0 "$VFORGE" inspect "$corpus" && grep -q 'total: 2 files, 6000 rows' "$tmp/out" || bad "inspect text total"

# --- discovery: eval/ excluded at any depth, sorted by key, non-parquet ignored
mkdir -p "$tmp/c/b" "$tmp/c/a/eval" "$tmp/c/eval" "$tmp/c/x/eval/y"
cp "$corpus/rank00/batch_00000000.parquet" "$tmp/c/b/1.parquet"
cp "$corpus/rank00/batch_00000001.parquet" "$tmp/c/a/2.parquet"
for d in a/eval eval x/eval/y; do cp "$corpus/rank00/batch_00000000.parquet" "$tmp/c/$d/q.parquet"; done
echo junk > "$tmp/c/a/notes.txt"
expect_rc 0 "$VFORGE" inspect "$tmp/c" --json
python3 - "$tmp/out" "$tmp/c" <<'PY' || bad "discovery excludes eval/ and sorts by key"
import json, sys
d = json.load(open(sys.argv[1])); root = sys.argv[2]
keys = [f["key"] for f in d["files"]]
assert keys == [root + "/a/2.parquet", root + "/b/1.parquet"], keys
PY

# --- cat: JSON lines, offsets across row groups and files, ids from physical rows
expect_rc 0 "$VFORGE" cat "$corpus" --limit 3
[ "$(wc -l <"$tmp/out")" -eq 3 ] || bad "cat --limit 3 gives 3 lines"
python3 -c '
import json,sys
for l in open(sys.argv[1]): json.loads(l)' "$tmp/out" || bad "cat lines are JSON"
f0="$corpus/rank00/batch_00000000.parquet"; f1="$corpus/rank00/batch_00000001.parquet"
# across a row-group boundary (row groups of 2048) and across files
expect_rc 0 "$VFORGE" cat "$corpus" --offset 2046 --limit 4 --columns id --with-id 'vf_point_id(filename, file_row_number)'
want=$(printf '{"__id__":"%s","id":%d}\n' "$(md5id "$f0:2046")" 2046 "$(md5id "$f0:2047")" 2047 "$(md5id "$f0:2048")" 2048 "$(md5id "$f0:2049")" 2049)
[ "$(cat "$tmp/out")" = "$want" ] || { bad "ids across row groups = md5(bare key:physical row)"; diff <(echo "$want") "$tmp/out" >&2; }
expect_rc 0 "$VFORGE" cat "$corpus" --offset 2998 --limit 4 --columns id --with-id 'vf_point_id(filename, file_row_number)'
want=$(printf '{"__id__":"%s","id":%d}\n' "$(md5id "$f0:2998")" 2998 "$(md5id "$f0:2999")" 2999 "$(md5id "$f1:0")" 3000 "$(md5id "$f1:1")" 3001)
[ "$(cat "$tmp/out")" = "$want" ] || { bad "ids across files = md5(bare key:physical row)"; diff <(echo "$want") "$tmp/out" >&2; }
# the same rows reached through a different scan order (a later offset inside a later row group)
expect_rc 0 "$VFORGE" cat "$f1" --offset 2777 --limit 1 --columns id --with-id 'make_point_id(filename, file_row_number)'
[ "$(cat "$tmp/out")" = "$(printf '{"__id__":"%s","id":5777}' "$(md5id "$f1:2777")")" ] || bad "make_point_id on a single file"
# id_root strips a directory so a local mirror gets bucket-style keys
expect_rc 0 "$VFORGE" cat "$corpus" --id-root "$corpus" --offset 5 --limit 1 --columns id --with-id 'vf_point_id(filename, file_row_number)'
[ "$(cat "$tmp/out")" = "$(printf '{"__id__":"%s","id":5}' "$(md5id "rank00/batch_00000000.parquet:5")")" ] || bad "--id-root"
expect_rc 0 "$VFORGE" cat "$corpus" --offset 3 --limit 1 --columns id --with-id id
[ "$(cat "$tmp/out")" = '{"__id__":3,"id":3}' ] || bad "integer column id"
expect_rc 2 "$VFORGE" cat "$corpus" --with-id 'vf_point_id(filename' && grep -qi 'vf_point_id(filename' "$tmp/err" || bad "bad id expression named"
expect_rc 2 "$VFORGE" cat "$corpus" --columns nope && grep -q "nope" "$tmp/err" || bad "missing column named"
expect_rc 0 "$VFORGE" cat "$corpus" --offset 6000
[ ! -s "$tmp/out" ] || bad "offset past the end prints nothing"

# --- scan
expect_rc 0 "$VFORGE" scan "$corpus" --json
json_ok "$tmp/out" || bad "scan --json is one JSON object"
python3 - "$tmp/out" <<'PY' || bad "scan --json keys"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("rows", "bytes", "seconds", "mb_per_s", "checksum"): assert k in d, k
assert d["rows"] == 6000 and d["bytes"] > 6000 * 32 * 4, d
PY
c2=$(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["checksum"]))' "$tmp/out")
expect_rc 0 "$VFORGE" --threads 1 scan "$corpus" --json
c1=$(python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["checksum"]))' "$tmp/out")
[ "$c1" = "$c2" ] || bad "checksum independent of --threads ($c1 vs $c2)"
expect_rc 0 "$VFORGE" scan "$corpus" --columns emb --json
grep -q '"vectors":6000' "$tmp/out" || bad "scan validates 6000 vectors"

# --- --memory-budget: a row group that cannot fit is a clear error, not an overrun
expect_rc 1 "$VFORGE" --memory-budget 1K scan "$corpus" && grep -q 'memory budget' "$tmp/err" || bad "--memory-budget too small"
expect_rc 2 "$VFORGE" --memory-budget lots scan "$corpus" && grep -q -- '--memory-budget' "$tmp/err" || bad "--memory-budget syntax"
expect_rc 0 "$VFORGE" --memory-budget 1G --threads 2 scan "$corpus" --json

# --- bad data: exit 2, the message names the file and what was expected
expect_rc 2 "$VFORGE" scan "$SRC/tests/data/dim_mismatch.parquet" --columns emb
grep -q 'dim_mismatch.parquet' "$tmp/err" && grep -q 'row 3' "$tmp/err" && grep -qi 'dimension' "$tmp/err" || { bad "dimension mismatch names file/row"; cat "$tmp/err" >&2; }
expect_rc 2 "$VFORGE" scan "$SRC/tests/data/null_element.parquet" --columns emb
grep -q 'null_element.parquet' "$tmp/err" && grep -q 'row 4' "$tmp/err" || { bad "null element names file/row"; cat "$tmp/err" >&2; }
head -c 100000 "$f0" > "$tmp/trunc.parquet"
expect_rc 2 "$VFORGE" cat "$tmp/trunc.parquet" && grep -q 'trunc.parquet' "$tmp/err" || bad "truncated file named"
printf 'not a parquet file at all, just text' > "$tmp/text.parquet"
expect_rc 2 "$VFORGE" inspect "$tmp/text.parquet" && grep -q 'text.parquet' "$tmp/err" || bad "non-parquet file named"
# a file cut inside its data pages (footer intact is impossible; corrupt a page instead)
cp "$f0" "$tmp/flip.parquet"
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$tmp/flip.parquet" bs=1 seek=200 conv=notrunc 2>/dev/null
"$VFORGE" scan "$tmp/flip.parquet" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" -ge 3 ] || grep -q -e AddressSanitizer -e 'runtime error' "$tmp/err"; then bad "corrupt page crashed (rc $rc)"; else ok; fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
