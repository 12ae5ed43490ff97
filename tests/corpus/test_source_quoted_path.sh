#!/usr/bin/env bash
# A vector file or an ann-filtering bundle directory (src/corpus/source.c) at a path holding
# what YAML would have to escape — a quote, `$`, `${VAR}`, `: `, ` #` — reads exactly as the same
# file at a plain path: the one-part dataset config is built directly (vf_config_vector_file),
# so nothing is quoted and `$` is no variable.  Before, the config was rendered as YAML text and
# parsed back, and a path with a newline was refused outright.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -n "$PY" ] && [ -x "$PY" ] && "$PY" -c 'import numpy, pyarrow' 2>/dev/null || { echo "numpy/pyarrow not available: skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/quoted-path.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
d="$tmp/it's \$HOME \${HOME} a: b #c"
nl="$tmp/new
line"
mkdir -p "$d" "$tmp/plain" "$nl"
"$PY" - "$tmp/plain" <<'PYEOF' || { echo "numpy failed"; exit 1; }
import json, sys, numpy as np
d = sys.argv[1]
v = np.random.default_rng(3).standard_normal((60, 8), dtype=np.float32)
np.save(d + "/vectors.npy", v)
with open(d + "/base.fbin", "wb") as f:
    f.write(np.array([60, 8], dtype=np.int32).tobytes()); f.write(v.tobytes())
with open(d + "/payloads.jsonl", "w") as f:
    for i in range(60): f.write(json.dumps({"c": i % 3}) + "\n")
PYEOF
cp "$tmp/plain/vectors.npy" "$tmp/plain/base.fbin" "$tmp/plain/payloads.jsonl" "$d/"
cp "$tmp/plain/vectors.npy" "$nl/"
q="$tmp/plain/vectors.npy"
bf() { "$V" --quiet brute-force "$1" --queries "$q" -k 4 --output "$2" 2> "$tmp/err"; }
same() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(p).select(["query_id", "hit_ids", "hit_scores"]).to_pylist() for p in sys.argv[1:3])
assert a == b and len(a) == 60, (a[:1], b[:1])
PYEOF
}
for f in vectors.npy base.fbin; do
  bf "$tmp/plain/$f" "$tmp/plain-$f.parquet" || fail "plain $f: $(cat "$tmp/err")"
  if bf "$d/$f" "$tmp/odd-$f.parquet"; then
    same "$tmp/plain-$f.parquet" "$tmp/odd-$f.parquet" && ok "$f under a quote, \$ and \${VAR}: the same hits" || fail "$f: hits differ"
  else
    fail "$f at an odd path: $(cat "$tmp/err")"
  fi
done
bf "$tmp/plain" "$tmp/plain-dir.parquet" || fail "plain bundle: $(cat "$tmp/err")"
if bf "$d" "$tmp/odd-dir.parquet"; then
  same "$tmp/plain-dir.parquet" "$tmp/odd-dir.parquet" && ok "a bundle directory at an odd path: the same hits" || fail "bundle: hits differ"
else
  fail "bundle at an odd path: $(cat "$tmp/err")"
fi
if bf "$nl/vectors.npy" "$tmp/nl.parquet"; then
  same "$tmp/plain-vectors.npy.parquet" "$tmp/nl.parquet" && ok "a path with a newline reads (the YAML route refused it)" || fail "newline: hits differ"
else
  fail "a path with a newline: $(cat "$tmp/err")"
fi
[ $fails -eq 0 ] && echo "all quoted-path checks passed"
[ $fails -eq 0 ]
