#!/usr/bin/env bash
# Issue 16, item 1: every command's --json object carries "peak_rss_bytes" (getrusage ru_maxrss
# in bytes), an integer of at least 1 MiB (a process that ran at all) and below 64 GiB.
# Commands: version, scan, inspect, convert, generate-queries, brute-force, index build / search /
# info, load run, bench, load-dist (local engine).
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${VF_PY:-}
[ -x "$PY" ] && "$PY" -c 'import numpy' 2> /dev/null || { echo "skip: no python with numpy (VF_PY)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/peak-rss.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
corpus="$src/examples/corpus"

# check LABEL CMD...: CMD exits 0 and its stdout is one JSON object with a sane peak_rss_bytes
check() {
  local label=$1; shift
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -ne 0 ]; then
    fail "$label: exit $rc ($(tail -c 300 "$tmp/err"))"
    return
  fi
  if "$PY" - "$tmp/out" <<'EOF'
import json, sys
d = json.loads(open(sys.argv[1]).read())
v = d.get("peak_rss_bytes")
assert isinstance(v, int) and not isinstance(v, bool), v
assert (1 << 20) <= v < (64 << 30), v
assert list(d).count("peak_rss_bytes") == 1
EOF
  then ok "$label: peak_rss_bytes $(grep -o '"peak_rss_bytes": *[0-9]*' "$tmp/out")"
  else fail "$label: $(head -c 400 "$tmp/out")"
  fi
}

check "version" "$V" version --json
check "scan" "$V" --quiet scan "$corpus" --json
check "inspect" "$V" --quiet inspect "$corpus" --json
"$PY" -c "import numpy as np; np.save('$tmp/v.npy', np.random.default_rng(1).standard_normal((300, 16)).astype('float32'))"
check "convert" "$V" --quiet convert "$tmp/v.npy" --output "$tmp/conv" --json
check "generate-queries" "$V" --quiet generate-queries "$corpus" -n 20 --seed 1 --output "$tmp/q.parquet" --json
check "brute-force" "$V" --quiet brute-force "$corpus" --queries "$tmp/q.parquet" -k 5 --metric cosine --output "$tmp/gt.parquet" --json
check "index build" "$V" --quiet index build "$corpus" --output "$tmp/x.ivf" --type flat --nlist 4 --metric cosine --json
check "index search" "$V" --quiet index search "$tmp/x.ivf" --queries "$tmp/q.parquet" -k 5 --output "$tmp/is.parquet" --json
check "index info" "$V" --quiet index info "$tmp/x.ivf" --json
cat > "$tmp/cfg.yaml" <<EOF
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource: {uri: $corpus}
vectorstore: {type: local, path: $tmp/store, collection_name: rss, params: {recreate: true}}
EOF
check "load run" "$V" --quiet load run "$tmp/cfg.yaml" --json
check "bench" "$V" --quiet bench "$tmp/cfg.yaml" --queries "$tmp/q.parquet" --ground-truth "$tmp/gt.parquet" -k 5 --json
check "load-dist" "$V" --quiet load-dist "$tmp/cfg.yaml" --engine local --num-shards 1 --runs-dir "$tmp/runs" --json

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
