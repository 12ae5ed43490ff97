#!/usr/bin/env bash
# Named buffer ceilings driven by input (issue 15 item 5): with the test hook
# VFORGE_TEST_BUF_LIMIT=NAME=BYTES (src/util/util.c; it only lowers a ceiling), an input past a
# ceiling fails cleanly — exit 1, "too big: more than the NAME limit of BYTES bytes" on stderr,
# nothing on stdout, no output file — for each category that input reaches on a small corpus:
#   VF_BUF_MAX_ROWS_HELD  generate-queries' query set
#   VF_BUF_MAX_RECORD     a payload member filled into a --filter-template
#   VF_BUF_MAX_BATCH      a jsonl payload part's batch (an ann-filtering bundle directory)
#   VF_BUF_MAX_JSON_DOC   inspect --json, index build --json, scan --json
#   IVF_MAX_SPILL_FRAME   index build's spill frames
#   DIST_MAX_MANIFEST     load-dist's manifest;  DIST_MAX_COMMAND  a shard's worker arguments
#   PQT_MAX_PAGE_BUF      the parquet reader's page scratch (scan of the example corpus)
# The same commands without the hook succeed (so the hook, not the input, makes them fail), and
# a hook above a ceiling changes nothing.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=${VF_PY:-$here/.venv/bin/python}
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null || { echo "skip: no python with numpy (VF_PY)"; exit 77; }
cd "$here" || exit 1 # examples/corpus.yaml names its corpus relative to the repository root
C=$here/examples/corpus
Y=$here/examples/corpus.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# an ann-filtering bundle: vectors.npy + payloads.jsonl (a `type: dataset` with a jsonl part)
mkdir -p "$tmp/bun"
"$PY" - "$tmp/bun" <<'PY' || fail "bundle fixture"
import json, sys
import numpy as np
d = sys.argv[1]
np.save(d + '/vectors.npy', np.arange(80, dtype=np.float32).reshape(20, 4))
with open(d + '/payloads.jsonl', 'w') as f:
    for i in range(20):
        f.write(json.dumps({'k': i, 'name': 'row %d' % i}) + '\n')
PY

# limited NAME BYTES OUTFILE -- command...: fails as described above; then runs it unlimited
limited() {
  local name=$1 bytes=$2 out=$3
  shift 4
  rm -rf "$out"
  VFORGE_TEST_BUF_LIMIT="$name=$bytes" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  local rc=$?
  [ "$rc" -eq 1 ] || fail "$name=$bytes: exit $rc, want 1: $* ($(cat "$tmp/stderr"))"
  grep -q "too big: more than the $name limit of $bytes bytes" "$tmp/stderr" ||
    fail "$name=$bytes: no named message: $(cat "$tmp/stderr")"
  [ ! -s "$tmp/stdout" ] || fail "$name=$bytes: wrote to stdout: $(head -c 200 "$tmp/stdout")"
  [ ! -e "$out" ] || fail "$name=$bytes: left $out behind"
  rm -rf "$out"
  "$@" >"$tmp/stdout" 2>"$tmp/stderr" || fail "$name: fails without the hook: $(cat "$tmp/stderr")"
  rm -rf "$out"
  # a hook above the ceiling is ignored (the hook only lowers)
  VFORGE_TEST_BUF_LIMIT="$name=18446744073709551615" "$@" >/dev/null 2>"$tmp/stderr" ||
    fail "$name: a hook above the ceiling changed the result: $(cat "$tmp/stderr")"
  rm -rf "$out"
}

TF='{"must":[{"key":"text","match":{"value":"$text"}}]}'
TB='{"must":[{"key":"name","match":{"value":"$name"}}]}'
limited VF_BUF_MAX_ROWS_HELD 100 "$tmp/q1.parquet" -- \
  "$V" generate-queries "$C" -n 20 --output "$tmp/q1.parquet"
limited VF_BUF_MAX_RECORD 4 "$tmp/q2.parquet" -- \
  "$V" generate-queries "$Y" -n 5 --filter-template "$TF" --output "$tmp/q2.parquet"
limited VF_BUF_MAX_BATCH 50 "$tmp/q3.parquet" -- \
  "$V" generate-queries "$tmp/bun" -n 3 --filter-template "$TB" --output "$tmp/q3.parquet"
limited VF_BUF_MAX_JSON_DOC 100 "$tmp/none" -- "$V" inspect "$C" --json
limited IVF_MAX_SPILL_FRAME 1000 "$tmp/i1.ivf" -- \
  "$V" index build "$C" --output "$tmp/i1.ivf" --type flat --nlist 4
limited VF_BUF_MAX_JSON_DOC 64 "$tmp/none" -- \
  "$V" index build "$C" --output "$tmp/i2.ivf" --type flat --nlist 4 --json
mkdir -p "$tmp/runs"
limited DIST_MAX_MANIFEST 100 "$tmp/none" -- \
  "$V" load-dist "$Y" --num-shards 2 --engine local --dry-run --runs-dir "$tmp/runs"
limited DIST_MAX_COMMAND 10 "$tmp/none" -- \
  "$V" load-dist "$Y" --num-shards 2 --engine local --dry-run --runs-dir "$tmp/runs"
limited PQT_MAX_PAGE_BUF 1000 "$tmp/none" -- "$V" scan "$C"
limited VF_BUF_MAX_JSON_DOC 64 "$tmp/none" -- "$V" scan "$C" --json
echo "ok"
