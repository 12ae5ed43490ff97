#!/usr/bin/env bash
# Crash safety of `vforge index build` (issue 10): SIGKILL at random moments (4 kills spread over
# the build: reading, training, assigning, writing); each time the index file is absent or
# complete and identical, and a rerun over what the kill left behind (spill files, temp output)
# writes a byte-identical index (same rows, parameters and seed: the same file).
# Corpus: Fashion-MNIST t10k (Debian dataset-fashion-mnist), 10k x 784.  Skips while this
# vforge has no `index build`.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "skip: $IDX absent (dataset-fashion-mnist)"; exit 77; }
"$V" index build --help > /dev/null 2>&1 || { echo "skip: this vforge has no 'index build'"; exit 77; }
. "$src/tests/reliability/crash_lib.sh"
tmp=$(mktemp -d "${VF_TMP:-/tmp}/crash-index.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" convert "$IDX" --output "$tmp/c" --row-group-rows 1000 2>/dev/null || { echo "FAIL: convert"; exit 1; }
mkdir -p "$tmp/out"
build() { "$V" --threads 2 index build "$tmp/c" --output "$tmp/out/x.ivf" --type sq8 --nlist 32 --seed 3; }
# the reference duration is the faster of two warm runs: a slow first run (cold caches, a busy
# machine) would spread the kills past the end of later, faster builds
REF_MS=
for r in 1 2; do
  t0=$(now_ms)
  build 2>/dev/null || { echo "FAIL: reference build"; exit 1; }
  t=$(( $(now_ms) - t0 ))
  [ -z "$REF_MS" ] || [ "$t" -lt "$REF_MS" ] && REF_MS=$t
done
cp "$tmp/out/x.ivf" "$tmp/ref.ivf"
touch -d '-1 sec' "$tmp/ref.ivf"
CRASH_SEED=${CRASH_SEED:-977} crash_loop "index build" 4 "$tmp/out/x.ivf" "$tmp/ref.ivf" -- build
left=$(find "$tmp/out" -mindepth 1 ! -name x.ivf | wc -l)
echo "index build: reference ${REF_MS} ms; $crash_kills SIGKILLs ($crash_early before the index appeared, $crash_late after); $left file(s) of killed builds remain beside the output (never under its name)"
[ -n "${VF_RELIABILITY_FIGURES:-}" ] && echo "crash_index kills=$crash_kills reruns_identical=$((4 - crash_fail))/4" >> "$VF_RELIABILITY_FIGURES"
[ "$crash_fail" -eq 0 ] || exit 1
[ "$crash_kills" -ge 2 ] || { echo "FAIL: only $crash_kills kills landed while the build was alive"; exit 1; }
echo "ok: index build crash safety"
