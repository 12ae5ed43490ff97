#!/usr/bin/env bash
# Crash safety of brute-force (issue 10): SIGKILL at random moments (6 kills spread over the
# run), each time the output is absent or complete and identical (written to a temp name, fsynced,
# renamed), and a rerun over what the kill left behind gives byte-identical ground truth.
# Corpus: Fashion-MNIST t10k (Debian dataset-fashion-mnist) as 6 files (40k x 784).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "skip: $IDX absent (dataset-fashion-mnist)"; exit 77; }
. "$src/tests/reliability/crash_lib.sh"
tmp=$(mktemp -d "${VF_TMP:-/tmp}/crash-bf.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" convert "$IDX" --output "$tmp/one" --row-group-rows 2000 2>/dev/null || { echo "FAIL: convert"; exit 1; }
mkdir -p "$tmp/c" "$tmp/out"
for i in 1 2 3 4; do ln "$tmp/one/batch_00000000.parquet" "$tmp/c/copy_$i.parquet"; done
"$V" generate-queries "$tmp/c" -n 64 --seed 5 --output "$tmp/q.parquet" 2>/dev/null || { echo "FAIL: queries"; exit 1; }
bf() { "$V" --threads 2 brute-force "$tmp/c" --queries "$tmp/q.parquet" -k 10 --metric euclid --output "$tmp/out/gt.parquet"; }
# the faster of two runs (a slow cold first run would spread kills past later runs' end)
REF_MS=
for r in 1 2; do
  t0=$(now_ms)
  bf 2>/dev/null || { echo "FAIL: reference run"; exit 1; }
  t=$(( $(now_ms) - t0 ))
  [ -z "$REF_MS" ] || [ "$t" -lt "$REF_MS" ] && REF_MS=$t
done
cp "$tmp/out/gt.parquet" "$tmp/ref.parquet"
touch -d '-1 sec' "$tmp/ref.parquet"
CRASH_SEED=${CRASH_SEED:-4242} crash_loop brute-force 6 "$tmp/out/gt.parquet" "$tmp/ref.parquet" -- bf
echo "brute-force: reference run ${REF_MS} ms; $crash_kills SIGKILLs ($crash_early before the output appeared, $crash_late after), $crash_debris temp files left by kills"
left=$(find "$tmp/out" -name 'gt.parquet?*' | wc -l)
[ "$left" -eq 0 ] || echo "note: $left temp file(s) of killed runs remain in the output directory (never under the final name)"
[ -n "${VF_RELIABILITY_FIGURES:-}" ] && echo "crash_bruteforce kills=$crash_kills reruns_identical=$((6 - crash_fail))/6" >> "$VF_RELIABILITY_FIGURES"
[ "$crash_fail" -eq 0 ] || exit 1
[ "$crash_kills" -ge 3 ] || { echo "FAIL: only $crash_kills kills landed while the run was alive"; exit 1; }
echo "ok: brute-force crash safety"
