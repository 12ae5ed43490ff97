#!/usr/bin/env bash
# vforge load-dist on the suite's single-node Slurm (tests/services/slurm/up.sh; skipped unless
# VF_SLURM=1) into the embedded local store, 6 files x 3000 rows in 4 shards, point by point:
#   1. one sbatch --array=0-3 job; the manifest records its task ids; Slurm output in logs/;
#   2. the driver killed (SIGKILL) right after submitting, and one array task killed mid-load
#      meanwhile (the worker script's test hook, VFORGE_DIST_TEST_FAIL_SHARD): `load-dist --resume
#      RUN_ID` collects the done shards, finds the killed one ended without a done marker (Slurm
#      says FAILED), resubmits it alone as a new job (it resumes from its checkpoint), finalizes,
#      and the point set is exactly the corpus.
# (A task failing under a live driver on Slurm is covered by tests/dist/test_bf_dist.sh.)
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ "${VF_SLURM:-}" = 1 ] || { echo "SKIP: no Slurm (VF_SLURM unset; tests/services/with-services.sh starts one)"; exit 77; }
command -v sbatch > /dev/null || { echo "SKIP: sbatch not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/load-dist-slurm.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/dist/lib.sh"
make_corpus "$tmp/c" || { echo "FAIL: cannot build the test corpus"; exit 1; }
runs="$tmp/runs"

# --- 1
local_config s "$tmp/c" "$tmp/s1" "resources: {cpus: 1, memory: 1}"
if "$V" load-dist "$tmp/s.yaml" --engine slurm --poll 0.3 --num-shards 4 --runs-dir "$runs" --run-name slurm-ok --json \
     > "$tmp/s.json" 2> "$tmp/s.err"; then
  jq_py "$tmp/s.json" "r['engine'] == 'slurm' and r['verified'] and r['stored'] == 18000 and len(set(s['job_ids'].split('_')[0] for s in r['shards'])) == 1 and [s['job_ids'].split('_')[1] for s in r['shards']] == ['0', '1', '2', '3']" &&
    ok "one array job, tasks 0..3, 18000 points verified" || fail "report: $(cat "$tmp/s.json")"
  check_store "$tmp/s1" "4 shards on Slurm"
  run=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_dir'])" "$tmp/s.json")
  [ "$(ls "$run"/logs/slurm-*.out 2>/dev/null | wc -l)" -eq 4 ] && ok "Slurm output of the 4 tasks in logs/" || fail "Slurm outputs: $(ls "$run/logs")"
else
  fail "load-dist on Slurm exited $?: $(tail -5 "$tmp/s.err")"
fi

# --- 2
local_config d "$tmp/c" "$tmp/s3" "resources: {cpus: 1, memory: 1}"
VFORGE_DIST_TEST_FAIL_SHARD=1 VFORGE_DIST_TEST_FAIL_AFTER=0.1 "$V" load-dist "$tmp/d.yaml" --engine slurm --poll 0.3 --num-shards 4 \
  --runs-dir "$tmp/runs-d" > /dev/null 2> "$tmp/d.err" &
drv=$!
for _ in $(seq 200); do grep -q '"job_ids":\["' "$tmp"/runs-d/*/manifest.json 2> /dev/null && break; sleep 0.05; done
kill -9 $drv 2> /dev/null
wait $drv 2> /dev/null
d=$(ls -d "$tmp"/runs-d/* | head -1)
# let the array job end with no driver watching it
for _ in $(seq 120); do [ -z "$(squeue -h -n "vforge-$(basename "$d")" 2> /dev/null)" ] && break; sleep 0.25; done
if "$V" load-dist --resume "$(basename "$d")" --runs-dir "$tmp/runs-d" --poll 0.3 --json > "$tmp/d.json" 2> "$tmp/d.err"; then
  jq_py "$tmp/d.json" "r['state'] == 'finalized' and r['verified'] and r['shards'][1]['attempts'] == 2 and sum(s['attempts'] for s in r['shards']) == 5 and len(set(j.split('_')[0] for j in r['shards'][1]['job_ids'].split(','))) == 2" &&
    grep -q "shard 1 (job [0-9]*_1) ended without a done marker (Slurm state FAILED" "$tmp/d.err" &&
    ok "driver and task 1 killed: --resume collected 3 shards, resubmitted shard 1 alone as a new job, finalized" ||
    fail "resume report: $(cat "$tmp/d.json") $(grep shard "$tmp/d.err")"
  check_store "$tmp/s3" "after --resume"
else
  fail "--resume exited $?: $(tail -5 "$tmp/d.err")"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all load-dist (Slurm) checks passed"
