#!/usr/bin/env bash
# vforge load-dist with the local engine (workers are child processes) into the embedded local
# store, on 6 files x 3000 rows split into 4 shards, checked point by point (each id once):
#   1. a run: report (--json), run directory layout, shard configs listing their files, --status;
#   2. one worker killed mid-load (the worker script's test hook, VFORGE_DIST_TEST_FAIL_SHARD)
#      -> detected, resubmitted with --resume, and the final point set is still exactly the corpus;
#   3. a shard failing every attempt -> exit 1 naming it, --finalize refuses (exit 2);
#   4. --dry-run writes the run directory and shows the sbatch command (resources mapped) only;
#      --resume RUN_ID then runs it;
#   5. refusals: `row` / uuid() ids, a bad engine, an unknown run, a bad run name (exit 2).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/load-dist-local.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/dist/lib.sh"
make_corpus "$tmp/c" || { echo "FAIL: cannot build the test corpus"; exit 1; }
runs="$tmp/runs"

# --- 1. a 4-shard run
local_config one "$tmp/c" "$tmp/s1"
if "$V" load-dist "$tmp/one.yaml" --engine local --num-shards 4 --runs-dir "$runs" --json > "$tmp/one.json" 2> "$tmp/one.err"; then
  jq_py "$tmp/one.json" "r['state'] == 'finalized' and r['verified'] and r['stored'] == 18000 and r['expected_rows'] == 18000 and r['files'] == 6 and len(r['shards']) == 4 and all(s['state'] == 'done' and s['attempts'] == 1 for s in r['shards']) and [s['files'] for s in r['shards']] == [2, 2, 1, 1] and r['retries'] == 0" &&
    ok "report: finalized, 18000 verified, 4 shards done (2/2/1/1 files)" || fail "report: $(cat "$tmp/one.json")"
  check_store "$tmp/s1" "4 shards, local engine"
  run=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_dir'])" "$tmp/one.json")
  id=$(basename "$run")
  [[ "$id" =~ ^load-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$ ]] && ok "run id $id" || fail "run id '$id'"
  for f in manifest.json config.json config.yaml worker.sh shards/000.yaml shards/003.args done/000.json done/003.json state/prepare.json; do
    [ -f "$run/$f" ] || fail "run directory lacks $f"
  done
  # shard 1 lists files 1 and 5 of the sorted list (round-robin)
  grep -c '^    - ' "$run/shards/001.yaml" | grep -qx 2 && grep -q 'c/a/batch_00000001.parquet' "$run/shards/001.yaml" &&
    grep -q 'c/c/batch_00000001.parquet' "$run/shards/001.yaml" && ok "shard 1's config lists files 1 and 5" || fail "shard 1 config: $(cat "$run/shards/001.yaml")"
  grep -q 'Starting\|^ *"*text' "$run/worker.sh" && fail "worker.sh holds config text" || true
  "$V" load-dist --status "$id" --runs-dir "$runs" --json > "$tmp/st.json" 2> "$tmp/st.err" &&
    jq_py "$tmp/st.json" "r['state'] == 'finalized' and all(s['state'] == 'done' for s in r['shards'])" &&
    grep -q "shard   2: done" "$tmp/st.err" && ok "--status shows every shard done" || fail "--status: $(cat "$tmp/st.err")"
  "$V" load-dist --status "$run" > /dev/null 2>&1 && ok "--status takes the run directory too" || fail "--status RUN_DIR"
else
  fail "load-dist exited $?: $(tail -5 "$tmp/one.err")"
fi

# --- 2. a worker killed mid-load is resubmitted and resumes
local_config kill "$tmp/c" "$tmp/s2"
if VFORGE_DIST_TEST_FAIL_SHARD=1 VFORGE_DIST_TEST_FAIL_AFTER=0.1 "$V" load-dist "$tmp/kill.yaml" --engine local \
     --num-shards 4 --runs-dir "$runs" --run-name killed --json > "$tmp/kill.json" 2> "$tmp/kill.err"; then
  jq_py "$tmp/kill.json" "r['retries'] == 1 and r['shards'][1]['attempts'] == 2 and len(r['shards'][1]['job_ids'].split(',')) == 2 and all(s['attempts'] == 1 for i, s in enumerate(r['shards']) if i != 1) and r['verified']" &&
    grep -q "shard 1 (job local:[0-9]*) ended without a done marker (killed by signal 9\|shard 1 (job local:[0-9]*) ended without a done marker (exit status 137" "$tmp/kill.err" &&
    ok "killed shard 1 detected and resubmitted (attempt 2)" || fail "kill report: $(cat "$tmp/kill.json") $(grep -i shard "$tmp/kill.err")"
  check_store "$tmp/s2" "after a killed worker"
else
  fail "load-dist with a killed worker exited $?: $(tail -5 "$tmp/kill.err")"
fi

# --- 3. a shard that fails every attempt
local_config bad "$tmp/c" "$tmp/s3"
VFORGE_DIST_TEST_FAIL_SHARD=0 "$V" load-dist "$tmp/bad.yaml" --engine local --num-shards 2 --max-attempts 1 \
  --runs-dir "$runs" --run-name exhausted --json > "$tmp/bad.json" 2> "$tmp/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q "1 of 2 shards failed after 1 attempts each (shards 0)" "$tmp/bad.err" &&
  jq_py "$tmp/bad.json" "r['state'] == 'failed' and r['shards'][0]['state'] == 'failed' and r['shards'][1]['state'] == 'done'" &&
  ok "a shard failing every attempt: exit 1 naming it" || fail "exhausted shard: rc $rc $(tail -3 "$tmp/bad.err")"
bad_run=$(ls -d "$runs"/exhausted-* 2>/dev/null | head -1)
"$V" load-dist --finalize "$bad_run" 2> "$tmp/fin.err"
rc=$?
[ $rc -eq 2 ] && grep -q "1 of 2 shards have no done marker: 0 (failed)" "$tmp/fin.err" && ok "--finalize refuses unfinished shards" ||
  fail "--finalize of a failed run: rc $rc $(cat "$tmp/fin.err")"

# --- 4. --dry-run
local_config dry "$tmp/c" "$tmp/s4" "resources: {cpus: 2, memory: 1, partition: debug, time: \"00:10:00\"}
dispatch: {num_shards: 5, run_name: dry}"
if "$V" load-dist "$tmp/dry.yaml" --dry-run --runs-dir "$runs" 2> "$tmp/dry.err"; then
  cmdline=$(grep "submit command (not run)" "$tmp/dry.err")
  for want in "sbatch --parsable --export=ALL" "--array=0-4" "--cpus-per-task=2" "--mem=1G" "--partition=debug" "--time=00:10:00" "worker.sh"; do
    case $cmdline in *"$want"*) ;; *) fail "dry run command lacks '$want': $cmdline" ;; esac
  done
  d=$(ls -d "$runs"/dry-* | head -1)
  [ -f "$d/shards/004.yaml" ] && [ ! -e "$tmp/s4" ] && [ -z "$(ls "$d/done")" ] &&
    ok "--dry-run: 5 shard configs (dispatch.num_shards), nothing prepared or run" || fail "--dry-run wrote or ran something"
  # --resume of a dry run runs it
  "$V" --quiet load-dist "$tmp/dry.yaml" --dry-run --engine local --run-name dry-local --runs-dir "$runs" 2> /dev/null &&
    "$V" load-dist --resume "$(ls -d "$runs"/dry-local-* | head -1)" --json > "$tmp/dres.json" 2> "$tmp/dres.err" &&
    jq_py "$tmp/dres.json" "r['state'] == 'finalized' and r['verified'] and r['stored'] == 18000 and all(s['attempts'] == 1 for s in r['shards'])" &&
    ok "--resume of a --dry-run runs and finalizes it" || fail "--resume of a dry run: $(tail -3 "$tmp/dres.err")"
else
  fail "--dry-run: $(cat "$tmp/dry.err")"
fi

# --- 5. refusals
local_config row "$tmp/c" "$tmp/s5"
sed -i 's/^  payload_fields/  id_expression: "make_point_id(filename, row)"\n  payload_fields/' "$tmp/row.yaml"
"$V" load-dist "$tmp/row.yaml" --engine local --runs-dir "$runs" 2> "$tmp/row.err"
rc=$?
[ $rc -eq 2 ] && grep -q "global \`row\`" "$tmp/row.err" && ok "a row id expression: exit 2" || fail "row ids: rc $rc $(cat "$tmp/row.err")"
sed -i 's/make_point_id(filename, row)/uuid()/' "$tmp/row.yaml"
"$V" load-dist "$tmp/row.yaml" --engine local --runs-dir "$runs" 2> "$tmp/row.err"
rc=$?
[ $rc -eq 2 ] && grep -q "uuid()" "$tmp/row.err" && ok "uuid() ids: exit 2" || fail "uuid ids: rc $rc $(cat "$tmp/row.err")"
"$V" load-dist "$tmp/one.yaml" --engine kubernetes 2> "$tmp/e.err"; [ $? -eq 2 ] && ok "bad --engine: exit 2" || fail "bad engine"
"$V" load-dist --status no-such-run --runs-dir "$runs" 2> "$tmp/e.err"; rc=$?
[ $rc -eq 2 ] && grep -q "no such run" "$tmp/e.err" && ok "unknown run: exit 2" || fail "unknown run: rc $rc $(cat "$tmp/e.err")"
"$V" load-dist "$tmp/one.yaml" --run-name 'a b;rm' --runs-dir "$runs" 2> "$tmp/e.err"; rc=$?
[ $rc -eq 2 ] && grep -q "run name" "$tmp/e.err" && ok "bad run name: exit 2" || fail "bad run name: rc $rc"
"$V" load-dist 2> /dev/null; [ $? -eq 2 ] && ok "no CONFIG: exit 2" || fail "no CONFIG"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all load-dist (local engine) checks passed"
