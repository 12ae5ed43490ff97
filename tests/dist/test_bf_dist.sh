#!/usr/bin/env bash
# vforge brute-force-dist: N partial brute-force jobs (local engine; and Slurm when VF_SLURM=1),
# then the merge, must write exactly the bytes of a single-process brute-force (cmp); a killed
# job is resubmitted and the output is still identical; bad options exit 2.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bf-dist.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
C="$tmp/c"
for d in a b c; do mkdir -p "$C/$d" && cp "$src"/examples/corpus/rank00/*.parquet "$C/$d/"; done
"$V" --quiet generate-queries "$C" -n 40 --seed 3 --output "$tmp/q.parquet" || { echo "FAIL: generate-queries"; exit 1; }
for metric in cosine euclid; do
  "$V" --quiet brute-force "$C" --queries "$tmp/q.parquet" -k 10 --metric $metric --output "$tmp/single-$metric.parquet" ||
    { echo "FAIL: single-process brute-force"; exit 1; }
done

run_bf() { # NAME ENGINE SHARDS METRIC [env...]
  local name=$1 engine=$2 n=$3 metric=$4
  shift 4
  env "$@" "$V" brute-force-dist "$C" --queries "$tmp/q.parquet" -k 10 --metric "$metric" --num-shards "$n" \
    --engine "$engine" --poll 0.3 --runs-dir "$tmp/runs" --output "$tmp/$name.parquet" --json > "$tmp/$name.json" 2> "$tmp/$name.err"
}

engines=local
if [ "${VF_SLURM:-}" = 1 ] && command -v sbatch > /dev/null; then engines="local slurm"; else echo "info: no Slurm (VF_SLURM unset): local engine only"; fi
for e in $engines; do
  if run_bf "$e-4" "$e" 4 cosine; then
    cmp "$tmp/single-cosine.parquet" "$tmp/$e-4.parquet" && ok "$e engine, 4 shards: byte-identical to single-process brute-force" ||
      fail "$e engine: output differs from brute-force"
  else fail "$e engine: exit $?: $(tail -3 "$tmp/$e-4.err")"; fi
done
if run_bf local-3 local 3 euclid; then
  cmp -s "$tmp/single-euclid.parquet" "$tmp/local-3.parquet" && ok "euclid, 3 shards: byte-identical" || fail "euclid, 3 shards differ"
else fail "euclid 3 shards: $(tail -3 "$tmp/local-3.err")"; fi
last=${engines##* }
if run_bf killed "$last" 4 cosine VFORGE_DIST_TEST_FAIL_SHARD=3; then
  grep -q '"retries":1' "$tmp/killed.json" && cmp -s "$tmp/single-cosine.parquet" "$tmp/killed.parquet" &&
    ok "$last engine, a killed job resubmitted: still byte-identical" || fail "killed job: $(cat "$tmp/killed.json")"
else fail "killed job: $(tail -3 "$tmp/killed.err")"; fi
# the 4-shard run (named by its start second and a random tag, so the 3-shard run started in the
# same second may sort first)
run=$(sed -n 's/.*"run_dir":"\([^"]*\)".*/\1/p' "$tmp/$last-4.json")
"$V" brute-force-dist --status "$run" 2> "$tmp/st.err" && grep -q "shard   3: done" "$tmp/st.err" && ok "--status of a brute-force run" || fail "--status: $(cat "$tmp/st.err")"
"$V" brute-force-dist "$C" --queries "$tmp/q.parquet" -k 10 --engine local --runs-dir "$tmp/runs" 2> /dev/null
[ $? -eq 2 ] && ok "no --num-shards: exit 2" || fail "missing --num-shards"
"$V" brute-force-dist "$C" --queries "$tmp/q.parquet" -k 10 --num-shards 2 --metric nope --engine local --runs-dir "$tmp/runs" 2> /dev/null
[ $? -eq 2 ] && ok "bad --metric: exit 2" || fail "bad metric"
"$V" brute-force-dist "$C" --queries "$tmp/none.parquet" -k 10 --num-shards 2 --engine local --runs-dir "$tmp/runs" 2> /dev/null
[ $? -eq 2 ] && ok "missing queries file: exit 2" || fail "missing queries"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all brute-force-dist checks passed"
