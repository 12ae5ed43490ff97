#!/usr/bin/env bash
# Issue 14, defect 7: `--num-jobs N` without `--job-rank` used to run as rank 0 and exit 0.  In
# every command with --num-jobs (`load load`, `brute-force`) the rank comes from --job-rank, else
# SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, else SKYPILOT_JOB_RANK (refused when
# SKYPILOT_NUM_JOBS differs from N), else the command refuses (exit 2).  A rank from the
# environment does exactly what the same --job-rank does (same points, byte-identical partial).
set -uo pipefail
V=${VFORGE:?set VFORGE to the vforge binary}
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/jobrank.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
noenv() { env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_MIN -u SKYPILOT_JOB_RANK -u SKYPILOT_NUM_JOBS "$@"; }
# expect WANT_RC LABEL CMD... (stderr in $tmp/err)
expect() {
  local want=$1 label=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ $rc -eq "$want" ]; then ok "$label (exit $rc)"; return 0; fi
  fail "$label: exit $rc, want $want: $(tail -2 "$tmp/err")"
  return 1
}
mkdir -p "$tmp/c"
cp -r "$src/examples/corpus/." "$tmp/c/"
cfg() {
  cat > "$tmp/$1.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $tmp/c}
vectorstore: {type: local, path: $tmp/$1-store, collection_name: c}
EOC
  noenv "$V" --quiet load prepare "$tmp/$1.yaml" || fail "prepare $1"
}
points() { "$V" cat "$tmp/$1-store/c" --columns id | sort | md5sum; }

# --- load load
cfg none
expect 2 "load load --num-jobs 2 without a rank refuses" noenv "$V" load load "$tmp/none.yaml" --num-jobs 2 &&
  { grep -q -- '--job-rank' "$tmp/err" && grep -q SLURM_ARRAY_TASK_ID "$tmp/err" || fail "message: $(cat "$tmp/err")"; }
[ -n "$(ls "$tmp/none-store/c" | grep '^seg-')" ] && fail "the refused load wrote segments"
expect 2 "load load --job-rank without --num-jobs refuses" noenv "$V" load load "$tmp/none.yaml" --job-rank 1
cfg explicit
expect 0 "load load --num-jobs 2 --job-rank 1" noenv "$V" --quiet load load "$tmp/explicit.yaml" --num-jobs 2 --job-rank 1
cfg slurm
expect 0 "load load --num-jobs 2 in Slurm array task 5 (min 4)" noenv SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=4 \
  "$V" load load "$tmp/slurm.yaml" --num-jobs 2 && grep -q 'job rank 1 of 2' "$tmp/err" || fail "slurm rank not logged: $(cat "$tmp/err")"
[ "$(points slurm)" = "$(points explicit)" ] && ok "the Slurm rank loads what --job-rank 1 loads" || fail "slurm rank points differ"
cfg sky
expect 0 "load load --num-jobs 2 as SkyPilot job 1 of 2" noenv SKYPILOT_JOB_RANK=1 SKYPILOT_NUM_JOBS=2 \
  "$V" --quiet load load "$tmp/sky.yaml" --num-jobs 2
[ "$(points sky)" = "$(points explicit)" ] && ok "the SkyPilot rank loads what --job-rank 1 loads" || fail "skypilot rank points differ"
expect 2 "SKYPILOT_NUM_JOBS 3 with --num-jobs 2 refuses" noenv SKYPILOT_JOB_RANK=1 SKYPILOT_NUM_JOBS=3 \
  "$V" load load "$tmp/sky.yaml" --num-jobs 2 && { grep -q SKYPILOT_NUM_JOBS "$tmp/err" || fail "message: $(cat "$tmp/err")"; }
expect 2 "a Slurm task id past --num-jobs refuses" noenv SLURM_ARRAY_TASK_ID=7 "$V" load load "$tmp/sky.yaml" --num-jobs 2
expect 2 "a malformed SLURM_ARRAY_TASK_ID refuses" noenv SLURM_ARRAY_TASK_ID=x "$V" load load "$tmp/sky.yaml" --num-jobs 2
# one job: the environment does not matter (load-dist workers run `load load` in array tasks)
cfg one
expect 0 "load load without --num-jobs in array task 3 loads everything" noenv SLURM_ARRAY_TASK_ID=3 \
  "$V" --quiet load load "$tmp/one.yaml"
[ "$("$V" cat "$tmp/one-store/c" --columns id | wc -l)" -eq 6000 ] || fail "one job did not load the whole corpus"

# --- brute-force
noenv "$V" --quiet generate-queries "$tmp/c" -n 8 --seed 3 --output "$tmp/q.parquet" || fail "generate-queries"
expect 2 "brute-force --num-jobs 2 without a rank refuses" noenv "$V" brute-force "$tmp/c" --queries "$tmp/q.parquet" -k 5 --num-jobs 2
expect 0 "brute-force --num-jobs 2 --job-rank 1" noenv "$V" --quiet brute-force "$tmp/c" --queries "$tmp/q.parquet" -k 5 \
  --num-jobs 2 --job-rank 1 --output "$tmp/explicit.parquet"
expect 0 "brute-force --num-jobs 2 in Slurm array task 1" noenv SLURM_ARRAY_TASK_ID=1 "$V" --quiet brute-force "$tmp/c" \
  --queries "$tmp/q.parquet" -k 5 --num-jobs 2 --output "$tmp/slurm.parquet"
cmp -s "$tmp/explicit.parquet" "$tmp/slurm.parquet" && ok "the Slurm rank writes the --job-rank 1 partial, byte for byte" ||
  fail "brute-force partials differ"

[ $fails -eq 0 ] && echo "all job-rank checks passed" || echo "$fails job-rank checks FAILED"
exit $((fails > 0))
