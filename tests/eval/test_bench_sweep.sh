#!/usr/bin/env bash
# `vforge bench` sweeps and campaign files end to end (issue 19 "Sweeps and plots"), on the
# bundled corpus (examples/corpus, 6000 x 32) loaded into the local store with a flat IVF index
# of 32 lists (params.index), queries and exact top-10 from generate-queries / brute-force:
#   - --nprobe N (a single run keeps the plain --json keys); --nprobe 32 probes every list of the
#     flat index = exact (recall 1); a collection without an index refuses --nprobe (exit 2)
#   - --sweep nprobe=1,4,32: {"points": [...]} in order, recall non-decreasing, exact at 32
#   - a grid (--sweep nprobe=1,32 with --concurrency 1,2): 4 points, the last axis fastest;
#     --rps 200,400: open-loop points
#   - --results: one line per point with config, machine (CPU model as /proc/cpuinfo says, cores,
#     OpenBLAS core), vforge version; --per-query: points x queries lines whose mean is the recall
#   - --plot PNG / SVG and `vforge plot a.jsonl b.jsonl --output cmp.svg`
#   - usage errors (exit 2, nothing written, before any query runs): unknown key, a value twice,
#     a flag fixed and swept, a Qdrant key on the local store, a bad plot extension
#   - Qdrant (the stand-in, tests/services/qdrant-standin; no Qdrant server can be installed
#     here): --sweep hnsw-ef=16,32 --sweep exact=false,true sends exactly those search params,
#     once per query plus each handle's warm-up; oversampling/rescore reach `quantization`;
#     --warmup N sends N more searches; --nprobe is refused; the URL's password stays out of
#     --results.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bench-sweep.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus="$src/examples/corpus"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

cfg() { # NAME PARAMS_LINE [STORE_LINES]
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $corpus
vectorstore:
  ${3:-type: local
  path: $tmp/store}
  collection_name: $1
  $2
loader: {batch_size: 1000, concurrency: 2}
EOC
}
cfg ix "params: {index: {type: flat, nlist: 32, min_rows: 1000}}"
cfg plain ""
for c in ix plain; do
  "$V" --quiet load run "$tmp/$c.yaml" 2> "$tmp/err.txt" || { echo "FAIL: load run $c: $(cat "$tmp/err.txt")"; exit 1; }
done
"$V" --quiet generate-queries "$corpus" -n 40 --seed 3 --output "$tmp/q.parquet" 2> "$tmp/err.txt" &&
  "$V" --quiet brute-force "$corpus" --queries "$tmp/q.parquet" -k 10 --output "$tmp/gt.parquet" 2> "$tmp/err.txt" ||
  { echo "FAIL: queries / ground truth: $(cat "$tmp/err.txt")"; exit 1; }
Q=(--queries "$tmp/q.parquet" --ground-truth "$tmp/gt.parquet" -k 10)

# py SCRIPT ARGS...: a python3 check; its assertion message on failure
py() { python3 -c "$@" 2> "$tmp/py.txt" || { tail -1 "$tmp/py.txt"; return 1; }; }

# --- --nprobe, single runs
if "$V" bench "$tmp/ix.yaml" "${Q[@]}" --nprobe 32 --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
   m=$(py 'import json,sys; r=json.load(open(sys.argv[1]))
assert sorted(r) == sorted(["k","queries","recall","recall_min","recall_max","qps","latency_ms","errors","peak_rss_bytes"]), r
assert r["recall"] == 1.0 and r["errors"] == 0, r' "$tmp/o.json") &&
   grep -q "nlist 32, nprobe 32 as asked for" "$tmp/err.txt"; then
  ok "--nprobe 32 (= nlist) on the flat index: recall 1, the plain --json keys"
else fail "--nprobe 32: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi
"$V" bench "$tmp/plain.yaml" "${Q[@]}" --nprobe 4 > "$tmp/o.json" 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q "no usable IVF index" "$tmp/err.txt" && [ ! -s "$tmp/o.json" ] &&
  ok "--nprobe without an index: exit 2 ($(grep -o 'nprobe 4 asked for.*index of .emb.' "$tmp/err.txt"))" ||
  fail "--nprobe without an index: exit $rc $(cat "$tmp/err.txt")"

# --- a sweep, with every campaign file
if "$V" bench "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=1,4,32 --warmup 5 --label "flat nlist=32" \
     --results "$tmp/r.jsonl" --per-query "$tmp/pq.jsonl" --plot "$tmp/s.png" --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
   m=$(py 'import json,sys
t = open(sys.argv[1]).read(); assert t.count("\n") == 1, "not one line"
r = json.loads(t)
assert list(r) == ["points", "peak_rss_bytes"], r
p = r["points"]
assert [x["params"] for x in p] == [{"nprobe": 1}, {"nprobe": 4}, {"nprobe": 32}], [x["params"] for x in p]
rec = [x["recall"] for x in p]
assert rec[0] < rec[1] <= rec[2] == 1.0, rec
for x in p:
    assert x["queries"] == 40 and x["errors"] == 0 and x["qps"] > 0, x
    l = x["latency_ms"]; assert 0 < l["p50"] <= l["p95"] <= l["p99"] <= l["max"], l
# --results: the same figures plus the context
lines = [json.loads(s) for s in open(sys.argv[2])]
assert len(lines) == 3, len(lines)
cpu = [s.split(":", 1)[1].strip() for s in open("/proc/cpuinfo") if s.startswith("model name")]
for i, (x, y) in enumerate(zip(p, lines)):
    assert y["point"] == i and y["points"] == 3 and y["label"] == "flat nlist=32", y
    for k in x: assert y[k] == x[k], (k, x[k], y[k])
    c = y["config"]
    assert c["store"] == "local" and c["collection"] == "ix" and c["vector"] == "emb" and c["k"] == 10, c
    assert c["nprobe"] == x["params"]["nprobe"] and c["warmup"] == 5 and c["nqueries"] == 40 and c["concurrency"] == 1, c
    assert c["queries"].endswith("q.parquet") and c["hnsw_ef"] is None and c["rps"] is None, c
    m = y["machine"]
    assert m["cpus_available"] >= 1 and m["cpus_online"] >= m["cpus_available"] and m["threads"] >= 1, m
    assert not cpu or m["cpu_model"] == cpu[0], (m["cpu_model"], cpu[0])
    assert m["blas_core"] not in ("", "unknown") and m["blas"].startswith("OpenBLAS"), m
    assert y["vforge_version"] and y["time"].endswith("Z"), y
# --per-query: 3 x 40 lines, their mean is the point recall
q = [json.loads(s) for s in open(sys.argv[3])]
assert len(q) == 120, len(q)
for i, x in enumerate(p):
    mine = [e for e in q if e["point"] == i]
    assert len(mine) == 40 and all(e["params"] == x["params"] and e["latency_ms"] > 0 for e in mine), mine[:2]
    assert abs(sum(e["recall"] for e in mine) / 40 - x["recall"]) < 1e-9, i
    assert len({e["query_id"] for e in mine}) == 40
' "$tmp/o.json" "$tmp/r.jsonl" "$tmp/pq.jsonl"); then
  ok "--sweep nprobe=1,4,32: points in order, recall $(python3 -c 'import json,sys; print([round(x["recall"],3) for x in json.load(open(sys.argv[1]))["points"]])' "$tmp/o.json"); --results, --per-query"
else fail "--sweep nprobe: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi
grep -q "sweep of 3 points: nprobe=1,4,32" "$tmp/err.txt" && grep -q "point 3/3 nprobe=32: recall@10 1.0000" "$tmp/err.txt" &&
  ok "per-point summary lines on stderr" || fail "stderr summary: $(cat "$tmp/err.txt")"
if [ -s "$tmp/s.png" ] && py 'import sys, struct
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
w, h = struct.unpack(">II", d[16:24]); assert (w, h) == (1280, 560), (w, h)' "$tmp/s.png"; then
  ok "--plot s.png: a 1280x560 PNG"
else fail "--plot png: $(ls -l "$tmp")"; fi

# --- a grid, and the throughput-latency lists
if "$V" bench "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=1,32 --concurrency 1,2 --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
   m=$(py 'import json,sys; p=json.load(open(sys.argv[1]))["points"]
want = [{"nprobe": 1, "concurrency": 1}, {"nprobe": 1, "concurrency": 2}, {"nprobe": 32, "concurrency": 1}, {"nprobe": 32, "concurrency": 2}]
assert [x["params"] for x in p] == want, [x["params"] for x in p]
assert p[0]["recall"] == p[1]["recall"] and p[2]["recall"] == p[3]["recall"] == 1.0, [x["recall"] for x in p]' "$tmp/o.json"); then
  ok "grid nprobe x --concurrency 1,2: 4 points, the last axis fastest"
else fail "grid: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi
if "$V" bench "$tmp/plain.yaml" "${Q[@]}" --rps 200,400 --results "$tmp/rps.jsonl" --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
   m=$(py 'import json,sys; p=json.load(open(sys.argv[1]))["points"]
assert [x["params"] for x in p] == [{"rps": 200}, {"rps": 400}], p
assert all(x["recall"] == 1.0 and x["errors"] == 0 for x in p), p
r = [json.loads(s) for s in open(sys.argv[2])]
assert [x["config"]["rps"] for x in r] == [200, 400] and all(x["config"]["max_outstanding"] == 64 for x in r), r' "$tmp/o.json" "$tmp/rps.jsonl"); then
  ok "--rps 200,400: two open-loop points (latency from the scheduled times)"
else fail "--rps list: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi

# --- vforge plot: result files overlaid
if "$V" plot "$tmp/r.jsonl" "$tmp/rps.jsonl" --output "$tmp/cmp.svg" --title "two runs" 2> "$tmp/err.txt" &&
   grep -q "plot: 2 series, 5 points" "$tmp/err.txt" && head -c 200 "$tmp/cmp.svg" | grep -q "<svg" &&
   [ "$(grep -c 'fill:rgb(' "$tmp/cmp.svg")" -gt 5 ]; then
  ok "vforge plot a.jsonl b.jsonl --output cmp.svg"
else fail "vforge plot: $(cat "$tmp/err.txt")"; fi
"$V" plot "$tmp/r.jsonl" --output "$tmp/cmp.gif" > /dev/null 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q ".png or .svg" "$tmp/err.txt" && ok "plot to .gif: exit 2" || fail "plot .gif: exit $rc $(cat "$tmp/err.txt")"
echo '{"k": 10}' > "$tmp/bad.jsonl"
"$V" plot "$tmp/bad.jsonl" --output "$tmp/bad.svg" > /dev/null 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.jsonl: line 1 is not a bench result" "$tmp/err.txt" && [ ! -e "$tmp/bad.svg" ] &&
  ok "plot of a file that is not a results file: exit 2, names file and line" || fail "plot bad file: exit $rc $(cat "$tmp/err.txt")"

# --- usage errors: exit 2 before any query runs, no output files
expect2() { # DESC PATTERN ARGS...
  local desc=$1 pat=$2
  shift 2
  rm -f "$tmp/never.jsonl"
  "$V" bench "$@" --results "$tmp/never.jsonl" > "$tmp/o.txt" 2> "$tmp/err.txt"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/err.txt" && [ ! -s "$tmp/o.txt" ] && [ ! -e "$tmp/never.jsonl" ] &&
     ! grep -q "point 1/" "$tmp/err.txt"; then ok "$desc: $(tail -1 "$tmp/err.txt")"
  else fail "$desc: exit $rc, $(cat "$tmp/err.txt")"; fi
}
expect2 "unknown sweep key" "unknown parameter 'ef'" "$tmp/ix.yaml" "${Q[@]}" --sweep ef=1,2
expect2 "a value twice" "given twice" "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=4,4
expect2 "a key swept twice" "swept twice" "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=4 --sweep nprobe=8
expect2 "fixed and swept" "give the value once" "$tmp/ix.yaml" "${Q[@]}" --nprobe 4 --sweep nprobe=8,16
expect2 "--concurrency list and --sweep concurrency" "either as a list or in" "$tmp/ix.yaml" "${Q[@]}" --concurrency 1,2 --sweep concurrency=4
expect2 "qdrant key on the local store" "hnsw-ef applies to qdrant stores (this store is local)" "$tmp/ix.yaml" "${Q[@]}" --sweep hnsw-ef=16,32
expect2 "--rescore on the local store" "apply to qdrant stores" "$tmp/ix.yaml" "${Q[@]}" --rescore true
expect2 "a bad --rescore" "expected true or false" "$tmp/ix.yaml" "${Q[@]}" --rescore maybe
expect2 "a bad nprobe value" "integer in 1..16777216" "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=0
expect2 "plot extension" ".png or .svg" "$tmp/ix.yaml" "${Q[@]}" --sweep nprobe=1,2 --plot "$tmp/x.jpg"
expect2 "plot directory" "cannot write into the directory" "$tmp/ix.yaml" "${Q[@]}" --plot "$tmp/no/dir/x.svg"
expect2 "--max-outstanding closed loop" "open loop" "$tmp/ix.yaml" "${Q[@]}" --concurrency 1,2 --max-outstanding 4

# --- Qdrant: the stand-in
oracle="$src/tests/oracle"
shared=${VF_SHARED:-$src/../shared}
standin="$src/tests/services/qdrant-standin/server.mjs"
if command -v node > /dev/null && [ -f "$standin" ] && [ -f "$shared/qdrant/openapi.json" ] && [ -d "$oracle/node_modules/ajv" ]; then
  node "$standin" --port 0 --port-file "$tmp/qport" --openapi "$shared/qdrant/openapi.json" \
    --oracle "$oracle" > "$tmp/standin.log" 2>&1 &
  spid=$!
  trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -s "$tmp/qport" ] && break; sleep 0.1; done
  qp=$(cat "$tmp/qport" 2>/dev/null)
  cfg qd "" "type: qdrant
  url: http://vfuser:Pa55word@127.0.0.1:$qp"
  "$V" --quiet generate-queries "$corpus" -n 5 --seed 9 --output "$tmp/q5.parquet" 2> "$tmp/err.txt" &&
    "$V" --quiet brute-force "$corpus" --queries "$tmp/q5.parquet" -k 10 --output "$tmp/gt5.parquet" 2>> "$tmp/err.txt" ||
    fail "5 queries: $(cat "$tmp/err.txt")"
  Q5=(--queries "$tmp/q5.parquet" --ground-truth "$tmp/gt5.parquet" -k 10)
  stats() { python3 -c 'import json,sys,urllib.request; print(json.dumps(json.load(urllib.request.urlopen("http://127.0.0.1:%s/__standin/stats" % sys.argv[1]))))' "$qp"; }
  reset() { python3 -c 'import sys,urllib.request; urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/__standin/stats/reset" % sys.argv[1], method="POST"))' "$qp"; }
  if [ -z "$qp" ]; then
    fail "qdrant stand-in did not start: $(cat "$tmp/standin.log")"
  elif ! "$V" --quiet load run "$tmp/qd.yaml" 2> "$tmp/err.txt"; then
    fail "qdrant: load run: $(cat "$tmp/err.txt")"
  else
    reset
    if "$V" bench "$tmp/qd.yaml" "${Q5[@]}" --sweep hnsw-ef=16,32 --sweep exact=false,true \
         --results "$tmp/qr.jsonl" --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
       stats > "$tmp/stats.json" &&
       m=$(py 'import json,sys, collections
p = json.load(open(sys.argv[1]))["points"]
want = [{"hnsw-ef": e, "exact": x} for e in (16, 32) for x in (False, True)]
assert [x["params"] for x in p] == want, [x["params"] for x in p]
assert all(x["recall"] == 1.0 and x["errors"] == 0 for x in p), p
s = json.load(open(sys.argv[2]))
assert s["invalid"] == 0, s["invalid_samples"]
seen = collections.Counter((x.get("hnsw_ef"), x.get("exact")) for x in s["search_params"])
# per point: 5 queries + the handle warm-up, each its own search with its params
assert seen == {(e, x): 6 for e in (16, 32) for x in (False, True)}, seen
r = open(sys.argv[3]).read()
assert "Pa55word" not in r and "vfuser" not in r, "password in --results"
l = [json.loads(s) for s in r.splitlines()]
assert l[0]["config"]["url"].startswith("http://127.0.0.1:") and l[3]["config"]["hnsw_ef"] == 32 and l[3]["config"]["exact"] is True, l[3]["config"]
' "$tmp/o.json" "$tmp/stats.json" "$tmp/qr.jsonl"); then
      ok "qdrant --sweep hnsw-ef=16,32 --sweep exact=false,true: 4 points, each search with its params; no password in --results"
    else fail "qdrant sweep: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi
    reset
    if "$V" bench "$tmp/qd.yaml" "${Q5[@]}" --sweep oversampling=1,2 --rescore false --hnsw-ef 64 --warmup 3 --json > "$tmp/o.json" 2> "$tmp/err.txt" &&
       stats > "$tmp/stats.json" &&
       m=$(py 'import json,sys, collections
s = json.load(open(sys.argv[1]))
assert s["invalid"] == 0, s["invalid_samples"]
seen = collections.Counter((x.get("hnsw_ef"), json.dumps(x.get("quantization"), sort_keys=True)) for x in s["search_params"])
want = {(64, json.dumps({"rescore": False, "oversampling": o}, sort_keys=True)): 9 for o in (1, 2)}
assert seen == want, seen   # 5 queries + 1 handle warm-up + --warmup 3, per point
' "$tmp/stats.json"); then
      ok "qdrant --sweep oversampling=1,2 with --rescore false --hnsw-ef 64 --warmup 3: quantization params, 3 warm-up searches per point"
    else fail "qdrant oversampling: ${m:-} $(cat "$tmp/o.json" "$tmp/err.txt")"; fi
    expect2 "--sweep nprobe on qdrant" "nprobe applies to the local store" "$tmp/qd.yaml" "${Q5[@]}" --sweep nprobe=4,8
    expect2 "--nprobe on qdrant" "nprobe applies to the local store" "$tmp/qd.yaml" "${Q5[@]}" --nprobe 4
  fi
else
  echo "note: node, the qdrant stand-in (and its ajv in tests/oracle/node_modules) or $shared/qdrant/openapi.json absent; qdrant sweeps not checked"
fi

[ $fails -eq 0 ] && echo "all bench sweep checks passed" || echo "$fails bench sweep check(s) failed"
[ $fails -eq 0 ]
