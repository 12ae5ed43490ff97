#!/usr/bin/env bash
# `vforge load inspect CONFIG` (DESIGN.md "Configuration", issue 3 "Config"): prints one JSON
# object — the resolved config with secrets masked, the files with their row counts, the total,
# the collection and the store — writes nothing, and exits 2 on config errors with
# "file:line: ..." on stderr.  Skipped (77) while the command is not wired into the CLI.
set -uo pipefail
VFORGE=${VFORGE:?VFORGE must point at the vforge binary}
SRC=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/cfgcli.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs="$SRC/tests/data/configs"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() {
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then bad "exit $rc (want $want): $*"; sed 's/^/  | /' "$tmp/err" | head -5 >&2; return 1; fi
  ok
}

if ! "$VFORGE" load inspect --help >/dev/null 2>&1; then
  echo "skip: 'vforge load inspect' is not available in this build"
  exit 77
fi
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }

# --- the example config from the repository root: relative corpus path, defaults applied
unset VF_CORPUS QDRANT_URL QDRANT_API_KEY
export VF_STORE="$tmp/store-must-not-exist"
(cd "$SRC" && "$VFORGE" load inspect tests/data/configs/local_corpus.yaml) >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then bad "inspect local_corpus.yaml exit $rc"; sed 's/^/  | /' "$tmp/err" | head -5 >&2; else ok; fi
python3 - "$tmp/out" "$tmp/store-must-not-exist" <<'PY' || bad "inspect JSON content"
import json, sys
d = json.load(open(sys.argv[1]))          # exactly one JSON object on stdout
assert set(d) >= {"config", "files", "total_rows", "collection", "store"}, sorted(d)
assert d["total_rows"] == 6000, d["total_rows"]
assert d["collection"] == "example" and d["store"] == "local", d
files = d["files"]
assert [f["rows"] for f in files] == [3000, 3000], files
keys = [f["key"] for f in files]
assert keys == sorted(keys) and keys[0].endswith("examples/corpus/rank00/batch_00000000.parquet"), keys
assert all(f["uri"].startswith("/") for f in files), files
c = d["config"]
assert c["vectors"] == {"emb": {"type": "dense", "column": "emb", "distance": "cosine",
                                "comparator": None, "source": None}}, c["vectors"]
ds = c["datasource"]
assert ds["uri"] == "examples/corpus" and ds["payload_fields"] == {"text": "text", "meta": "meta"}, ds
assert ds["id_expression"] == "vf_point_id(filename, file_row_number)", ds
vs = c["vectorstore"]
assert vs["type"] == "local" and vs["path"] == sys.argv[2] and vs["params"] == {}, vs
assert c["loader"] == {"batch_size": 500, "prefetch_size": 2000, "concurrency": 8, "retries": 5,
                       "wait": False, "skip_bad_rows": False}, c["loader"]
PY
[ ! -e "$tmp/store-must-not-exist" ] && ok || bad "inspect created the store directory"

# --- from elsewhere, with the corpus given through a variable
(cd "$tmp" && VF_CORPUS="$SRC/examples/corpus" "$VFORGE" load inspect "$configs/local_corpus.yaml") >"$tmp/out" 2>"$tmp/err" \
  && ok || bad "inspect with VF_CORPUS"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["total_rows"]==6000 and len(d["files"])==2' "$tmp/out" \
  || bad "VF_CORPUS content"

# --- secrets are masked; the store is not contacted
export VFT_QDRANT_API_KEY="sk-cli-SHOULD-NOT-LEAK"
cat >"$tmp/qdrant.yaml" <<EOF
vectors:
  emb: {column: emb, distance: dot}
datasource:
  uri: $SRC/examples/corpus
  id_root: $SRC/examples/corpus
vectorstore:
  type: qdrant
  url: http://127.0.0.1:9
  api_key: \${VFT_QDRANT_API_KEY}
  collection_name: cli-test
EOF
expect_rc 0 "$VFORGE" load inspect "$tmp/qdrant.yaml"
grep -q 'SHOULD-NOT-LEAK' "$tmp/out" "$tmp/err" && bad "api_key leaked into inspect output" || ok
python3 - "$tmp/out" <<'PY' || bad "qdrant inspect content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["store"] == "qdrant" and d["collection"] == "cli-test", d
assert d["config"]["vectorstore"]["api_key"] == "****", d["config"]["vectorstore"]
assert [f["key"] for f in d["files"]] == ["rank00/batch_00000000.parquet", "rank00/batch_00000001.parquet"], d["files"]
PY

# --- config errors: exit 2, "file:line: ..." on stderr, nothing on stdout, no secret in messages
printf 'vectors:\n  emb: {column: emb}\ndatasource:\n  uri: %s\n  urll: x\n' "$SRC/examples/corpus" >"$tmp/typo.yaml"
expect_rc 2 "$VFORGE" load inspect "$tmp/typo.yaml"
grep -q "typo.yaml:5: unknown key 'datasource.urll'" "$tmp/err" || bad "unknown key message: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && bad "stdout not empty on a config error" || ok

printf 'vectors:\n  emb: {column: emb}\ndatasource:\n  uri: ${VFT_SURELY_UNSET_VAR}\n' >"$tmp/unset.yaml"
expect_rc 2 "$VFORGE" load inspect "$tmp/unset.yaml"
grep -q "unset.yaml:4: datasource.uri: environment variable 'VFT_SURELY_UNSET_VAR' is not set" "$tmp/err" \
  || bad "unset variable message: $(cat "$tmp/err")"

printf 'vectors:\n  emb: {column: emb}\ndatasource:\n  uri: /x\nloader:\n  batch_size: ${VFT_QDRANT_API_KEY}\n' >"$tmp/secret.yaml"
expect_rc 2 "$VFORGE" load inspect "$tmp/secret.yaml"
grep -q 'SHOULD-NOT-LEAK' "$tmp/err" && bad "secret value in an error message" || ok
grep -q 'secret.yaml:6: loader.batch_size' "$tmp/err" || bad "secret error location: $(cat "$tmp/err")"

expect_rc 2 "$VFORGE" load inspect "$tmp/no-such-config.yaml"
grep -q 'no-such-config.yaml' "$tmp/err" || bad "missing config not named"

printf 'vectors:\n  emb: {column: emb}\ndatasource:\n  uri: %s/nonexistent-corpus\n' "$tmp" >"$tmp/nocorpus.yaml"
expect_rc 2 "$VFORGE" load inspect "$tmp/nocorpus.yaml"
grep -q 'nonexistent-corpus' "$tmp/err" || bad "missing corpus not named"

# a dataset with a jsonl payload component renders its format (every vf_cfg_format has a name)
cat > "$tmp/jsonl.yaml" <<'EOC'
vectors: {vector: {type: dense, distance: cosine}}
datasource:
  type: dataset
  id_expression: row
  vectors: {format: npy, path: x/vectors.npy}
  payload: {format: jsonl, path: x/payloads.jsonl}
vectorstore: {type: local, path: ./vforge-data, collection_name: hm}
EOC
if "$VFORGE" load inspect "$tmp/jsonl.yaml" > "$tmp/jsonl.json" 2> "$tmp/err" &&
   grep -q '"payload":{"format":"jsonl"' "$tmp/jsonl.json"; then ok; else bad "jsonl component: $(head -c 300 "$tmp/err")"; fi

echo "config cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
