#!/usr/bin/env bash
# Footers parsed once (issue 15 item 2; src/corpus/plan.c): a corpus of 80 files — more than
# the 64 slots of httpsrc.c's byte cache, which used to hide the repeated footer reads — served
# by the HF stand-in (nginx).  brute-force (over the URI and over a config), generate-queries,
# load run (discard store), index build, scan and inspect must each fetch every file's footer
# exactly once: the planning pass parses it and every later reader opens over the plan's parsed
# copy (scan used to free its plan before its workers opened the files, so each footer was fetched
# twice).  load-dist fetches each footer exactly twice: once in the driver, whose one plan serves
# the run directory, prepare and the finalize count (it used to plan three times, fetching the
# first file's footer again for prepare and for finalize), and once in the worker whose share
# holds the file.  Counted from nginx's access log: a footer fetch is the reader's
# 64 KiB tail read (a GET answered 206 with 65536 body bytes; each file here is larger than
# that, its column chunks are not that long).  The results are checked against the same
# commands on the local copy of the files (rows, hits, index size), so reading over kept
# footers changes nothing they compute.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "HF stand-in not running (VF_HF_ENDPOINT unset): skipped"; exit 77; }
[ -n "$PY" ] && [ -x "$PY" ] && "$PY" -c 'import pyarrow, numpy' 2>/dev/null || { echo "pyarrow/numpy not available: skipped"; exit 77; }
log=$VF_HF_ROOT/logs/access.log
[ -f "$log" ] || { echo "no nginx access log at $log: skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/plan-footers.XXXXXX" 2>/dev/null || mktemp -d)
repo="test-plan-footers-$$"
trap 'rm -rf "$tmp" "$VF_HF_ROOT/repos/vftest/$repo" "$VF_HF_ROOT/api/vftest/$repo"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
unset HF_TOKEN VFORGE_CA_BUNDLE
export VFORGE_REMOTE_RETRIES=2 HF_ENDPOINT=$VF_HF_ENDPOINT
NFILES=80

"$PY" - "$tmp/repo" "$tmp/q.npy" "$NFILES" <<'EOF' || { echo "cannot write the corpus"; exit 1; }
import os, sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
out, qpath, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out)
rng = np.random.default_rng(15)
dim, rows = 200, 120  # ~96 KB of vectors per file: over the reader's 64 KiB tail read
for i in range(n):
    v = rng.standard_normal((rows, dim), dtype=np.float32)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), dim)
    t = pa.table({"id": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)), "emb": emb})
    pq.write_table(t, f"{out}/part-{i:03d}.parquet", compression="none")
np.save(qpath, rng.standard_normal((8, dim), dtype=np.float32))
EOF
bash "$src/tests/services/hf/publish.sh" "$tmp/repo" vftest "$repo" || { echo "publish failed"; exit 1; }
U="hf://datasets/vftest/$repo"

# config FILE STORE COLLECTION: the corpus over HF into a local store
config() {
  cat > "$1" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $U
vectorstore: {type: local, path: $2, collection_name: $3}
EOC
}
config "$tmp/dist.yaml" "$tmp/dstore" pfd
config "$tmp/load.yaml" "$tmp/store" pf

# footers WHAT CMD...: run CMD, then every file's tail must have been fetched exactly once
# (FOOTERS_EACH=N: exactly N times, for a command whose worker processes open the files again)
footers() {
  local what=$1; shift
  local each=${FOOTERS_EACH:-1}
  local before
  before=$(wc -l < "$log")
  "$@" > "$tmp/$what.out" 2> "$tmp/$what.err" || { fail "$what: $(tail -3 "$tmp/$what.err")"; return; }
  tail -n +"$((before + 1))" "$log" > "$tmp/$what.log"
  "$PY" - "$tmp/$what.log" "$repo" "$NFILES" "$what" "$each" <<'EOF' && ok "$what: each of $NFILES footers fetched $each time(s)" || fail "$what: footers not fetched exactly $each time(s) each (see above)"
import re, sys, collections
path, repo, n, what, each = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
tails, gets = collections.Counter(), collections.Counter()
pat = re.compile(r'"GET /datasets/vftest/' + re.escape(repo) + r'/resolve/[^/]+/(\S+) HTTP/[^"]*" (\d+) (\d+)')
for line in open(path):
    m = pat.search(line)
    if not m: continue
    gets[m.group(1)] += 1
    if m.group(2) == "206" and m.group(3) == "65536": tails[m.group(1)] += 1
files = [f"part-{i:03d}.parquet" for i in range(n)]
bad = {f: tails[f] for f in files if tails[f] != each}
print(f"{what}: {sum(gets.values())} GETs, {sum(tails.values())} footer reads for {n} files")
if bad:
    print(f"{what}: footer reads per file not {each}: {dict(list(bad.items())[:8])} ({len(bad)} files)")
    sys.exit(1)
EOF
}

footers brute-force "$V" --quiet brute-force "$U" --queries "$tmp/q.npy" -k 5 --output "$tmp/bf_remote.parquet" --json
# a config: the ids' row count (ev_ids_init) used to read every footer before the plan lived
footers brute-force-config "$V" --quiet brute-force "$tmp/load.yaml" --queries "$tmp/q.npy" -k 5 --output "$tmp/bf_config.parquet" --json
# generate-queries used to free its plan after counting rows, so the gather pass fetched again
footers generate-queries "$V" --quiet generate-queries "$U" -n 400 --seed 7 --output "$tmp/gq_remote.parquet" --json
footers load "$V" --quiet load run "$tmp/load.yaml" --store discard --state-dir "$tmp/state" --json
footers index-build "$V" --quiet index build "$U" --output "$tmp/remote.ivf" --type flat --nlist 4 --json
footers scan "$V" --quiet scan "$U" --json
footers inspect "$V" --quiet inspect "$U" --json
FOOTERS_EACH=2 footers load-dist "$V" --quiet load-dist "$tmp/dist.yaml" --engine local --num-shards 4 --runs-dir "$tmp/runs" --json

# the same commands over the local copy compute the same things
"$V" --quiet brute-force "$tmp/repo" --queries "$tmp/q.npy" -k 5 --output "$tmp/bf_local.parquet" > /dev/null 2>&1 || fail "local brute-force"
"$PY" - "$tmp/bf_remote.parquet" "$tmp/bf_local.parquet" <<'EOF' && ok "brute-force: the same hits as over the local files" || fail "brute-force hits differ from local"
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(p).select(["hit_scores"]).to_pylist() for p in sys.argv[1:3])
assert a == b and len(a) == 8, (a[:1], b[:1])
EOF
"$PY" - "$tmp/bf_remote.parquet" "$tmp/bf_config.parquet" <<'EOF' && ok "brute-force over the config: the same hits" || fail "brute-force over the config: hits differ"
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(p).select(["hit_ids", "hit_scores"]).to_pylist() for p in sys.argv[1:3])
assert a == b and len(a) == 8, (a[:1], b[:1])
EOF
"$V" --quiet generate-queries "$tmp/repo" -n 400 --seed 7 --output "$tmp/gq_local.parquet" > /dev/null 2>&1 || fail "local generate-queries"
"$PY" - "$tmp/gq_remote.parquet" "$tmp/gq_local.parquet" <<'EOF' && ok "generate-queries: the same rows as over the local files" || fail "generate-queries rows differ from local"
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(p).select(["__source_row__", "emb"]).to_pylist() for p in sys.argv[1:3])
assert a == b and len(a) == 400, (a[:1], b[:1])
EOF
grep -q '"points":9600,' "$tmp/load.out" && ok "load: 9600 points sent" || fail "load: $(head -c 300 "$tmp/load.out")"
grep -q '"stored":9600,"verified":true' "$tmp/load-dist.out" && ok "load-dist: 9600 points stored and verified" || fail "load-dist: $(head -c 300 "$tmp/load-dist.out")"
"$V" --quiet scan "$tmp/repo" --json > "$tmp/scan_local.out" 2>/dev/null || fail "local scan"
"$PY" - "$tmp/scan.out" "$tmp/scan_local.out" <<'EOF' && ok "scan: the same rows, vectors and checksum as over the local files" || fail "scan differs from local: $(cat "$tmp/scan.out")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("rows", "vectors", "checksum", "row_groups", "files")
assert all(a[k] == b[k] for k in keys) and a["rows"] == 9600, ([a.get(k) for k in keys], [b.get(k) for k in keys])
EOF
grep -q '"total_files":80,"total_rows":9600,"total_row_groups":80,' "$tmp/inspect.out" && ok "inspect: 80 files, 9600 rows, 80 row groups" || fail "inspect: $(tail -c 300 "$tmp/inspect.out")"
"$V" --quiet index build "$tmp/repo" --output "$tmp/local.ivf" --type flat --nlist 4 > /dev/null 2>&1 || fail "local index build"
[ -s "$tmp/remote.ivf" ] && [ "$(stat -c %s "$tmp/remote.ivf")" = "$(stat -c %s "$tmp/local.ivf")" ] &&
  ok "index build: the same index size as over the local files" || fail "index sizes differ"

[ $fails -eq 0 ] && echo "all plan footer checks passed" || echo "$fails check(s) failed"
[ $fails -eq 0 ]
