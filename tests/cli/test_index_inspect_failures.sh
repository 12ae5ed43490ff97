#!/usr/bin/env bash
# The failure paths of `vforge index build|search|info` and `vforge inspect`, pinned byte for
# byte: for each case the exit code, stdout, stderr and the files left in the output directory
# (temporaries and spill files included) must equal the transcript below, which was recorded
# with the binary before these commands moved to the one cleanup idiom (issue 15 item 5).
# Paths are written as TMP (this run's scratch directory) and CORPUS (examples/corpus), and the
# host-pid.counter part of a temporary or spill file's name as HOST-PID.N.
#   index build: an --output whose parent is a file / is missing / is a directory, a missing
#     --spill-dir, --nlist 0 / 2^32 / not a number, --iterations 1000001, --kmeans-stop 2 / x,
#     --rabitq-bits without rabitq, a non-deterministic or unparsable --id-expression, an
#     unknown --column, an unknown option
#   index search: no --queries / -k, -k 100001, --nprobe 0, --rerank 2^32, missing queries,
#     an unknown --column, a missing --ground-truth, -k beyond the truth's k, --filter without
#     --corpus, --filter @missing, an --output whose parent is a file, an index with a flipped
#     byte, a truncated index
#   index info: an index with a flipped byte, a truncated one, a directory, a missing file
#   inspect: a missing path, a truncated parquet file, a file that is not parquet (text and
#     --json), a directory with one good and one damaged file, an unknown option
# Set VF_RECORD=1 to print the transcript instead of comparing (to record it with an old binary).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/idx-fail.XXXXXX" 2>/dev/null || mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
C="$src/examples/corpus"
one=$(ls "$C"/rank00/*.parquet | head -1)

# fixtures: queries, a ground truth with k 5, a small index, damaged copies
"$V" --quiet generate-queries "$C" -n 8 --seed 3 --output "$tmp/q.parquet" 2> "$tmp/e" ||
  { echo "FAIL: generate-queries: $(cat "$tmp/e")"; exit 1; }
"$V" --quiet brute-force "$C" --queries "$tmp/q.parquet" -k 5 --output "$tmp/gt.parquet" 2> "$tmp/e" ||
  { echo "FAIL: brute-force: $(cat "$tmp/e")"; exit 1; }
"$V" --quiet index build "$C" --output "$tmp/ok.ivf" --type flat --nlist 4 2> "$tmp/e" ||
  { echo "FAIL: index build: $(cat "$tmp/e")"; exit 1; }
size=$(stat -c %s "$tmp/ok.ivf")
cp "$tmp/ok.ivf" "$tmp/flip.ivf"
# one byte in the middle of the file, inverted
off=$((size / 2))
b=$(od -An -tu1 -j "$off" -N1 "$tmp/ok.ivf" | tr -d ' ')
printf "$(printf '\\%03o' $((255 - b)))" | dd of="$tmp/flip.ivf" bs=1 seek="$off" conv=notrunc status=none
head -c $((size - 100)) "$tmp/ok.ivf" > "$tmp/short.ivf"
head -c 1000 "$one" > "$tmp/short.parquet"
printf 'this is not a parquet file, only some text\n' > "$tmp/text.parquet"
mkdir -p "$tmp/mixed" && cp "$one" "$tmp/mixed/a.parquet" && cp "$tmp/short.parquet" "$tmp/mixed/b.parquet"
printf 'x' > "$tmp/afile"
mkdir -p "$tmp/adir" "$tmp/out"

# the scratch paths, and the host-pid.counter of a temporary or spill file's name, as words; the
# one info line a command logs when it switches OpenBLAS off a generic core is a fact about the
# CPU (tests/util/test_blas.sh checks it), not about the failure path, so it is dropped
norm() { sed -E -e '/^vforge: info: BLAS: /d' -e "s#$tmp#TMP#g" -e "s#$C#CORPUS#g" -e 's/\.(tmp|spill)\.[^ :/]+\.[0-9]+/.\1.HOST-PID.N/g' "$1"; }

# one case: its arguments run with `out` as the output directory; the transcript has the exit
# code, stdout, stderr and what is left in out/
run() {
  local name=$1
  shift
  rm -rf "$tmp/out" && mkdir -p "$tmp/out"
  "$V" "$@" > "$tmp/stdout" 2> "$tmp/stderr"
  local rc=$?
  echo "== $name: exit $rc"
  norm "$tmp/stdout" | sed 's/^/out: /'
  norm "$tmp/stderr" | sed 's/^/err: /'
  (cd "$tmp/out" && find . -mindepth 1 | LC_ALL=C sort | sed 's/^/left: /')
}

transcript() {
  O="$tmp/out"
  run build-parent-is-file index build "$C" --output "$tmp/afile/x.ivf" --type flat --nlist 4 --spill-dir "$O"
  run build-parent-missing index build "$C" --output "$O/nodir/x.ivf" --type flat --nlist 4
  run build-output-is-dir index build "$C" --output "$O" --type flat --nlist 4
  run build-spill-dir-missing index build "$C" --output "$O/x.ivf" --type flat --nlist 4 --spill-dir "$O/nospill"
  run build-nlist-0 index build "$C" --output "$O/x.ivf" --type flat --nlist 0
  run build-nlist-2p32 index build "$C" --output "$O/x.ivf" --type flat --nlist 4294967296
  run build-nlist-nan index build "$C" --output "$O/x.ivf" --type flat --nlist many
  run build-iterations index build "$C" --output "$O/x.ivf" --type flat --iterations 1000001
  run build-kmeans-stop-2 index build "$C" --output "$O/x.ivf" --type flat --kmeans-stop 2
  run build-kmeans-stop-x index build "$C" --output "$O/x.ivf" --type flat --kmeans-stop x
  run build-rabitq-bits index build "$C" --output "$O/x.ivf" --type sq8 --rabitq-bits 2
  run build-id-uuid index build "$C" --output "$O/x.ivf" --type flat --id-expression 'uuid()'
  run build-id-bad index build "$C" --output "$O/x.ivf" --type flat --id-expression 'nope('
  run build-column index build "$C" --output "$O/x.ivf" --type flat --column nothere
  run build-unknown-opt index build "$C" --output "$O/x.ivf" --type flat --frobnicate
  run search-no-queries index search "$tmp/ok.ivf" -k 3
  run search-no-k index search "$tmp/ok.ivf" --queries "$tmp/q.parquet"
  run search-k-big index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 100001
  run search-nprobe-0 index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --nprobe 0
  run search-rerank-big index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --rerank 4294967296
  run search-queries-missing index search "$tmp/ok.ivf" --queries "$tmp/none.parquet" -k 3
  run search-column index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --column nothere
  run search-gt-missing index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --ground-truth "$tmp/none.parquet" --output "$O/r.parquet"
  run search-gt-k index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 9 --ground-truth "$tmp/gt.parquet" --output "$O/r.parquet"
  run search-filter-no-corpus index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --filter '{"must":[{"key":"i","match":{"value":1}}]}' --output "$O/r.parquet"
  run search-filter-file index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --filter "@$tmp/none.json" --output "$O/r.parquet"
  run search-output-parent-file index search "$tmp/ok.ivf" --queries "$tmp/q.parquet" -k 3 --output "$tmp/afile/r.parquet"
  run search-flipped index search "$tmp/flip.ivf" --queries "$tmp/q.parquet" -k 3 --output "$O/r.parquet"
  run search-short index search "$tmp/short.ivf" --queries "$tmp/q.parquet" -k 3 --output "$O/r.parquet"
  run info-flipped index info "$tmp/flip.ivf"
  run info-short index info "$tmp/short.ivf" --json
  run info-dir index info "$tmp/adir"
  run info-missing index info "$tmp/none.ivf"
  run inspect-missing inspect "$tmp/none.parquet"
  run inspect-short inspect "$tmp/short.parquet"
  run inspect-text inspect "$tmp/text.parquet"
  run inspect-text-json inspect "$tmp/text.parquet" --json
  run inspect-mixed inspect "$tmp/mixed"
  run inspect-mixed-json inspect "$tmp/mixed" --json
  run inspect-unknown-opt inspect "$C" --frobnicate
}

if [ "${VF_RECORD:-}" = 1 ]; then transcript; exit 0; fi
transcript > "$tmp/got.txt"
cat > "$tmp/want.txt" <<'EOT'
== build-parent-is-file: exit 1
err: vforge: error: TMP/afile/x.ivf.tmp.HOST-PID.N: cannot create: Not a directory
== build-parent-missing: exit 1
err: vforge: error: TMP/out/nodir/x.ivf.spill.HOST-PID.N: cannot create spill file: No such file or directory
== build-output-is-dir: exit 1
err: vforge: error: TMP/out: cannot rename into place: Is a directory
== build-spill-dir-missing: exit 1
err: vforge: error: TMP/out/nospill/x.ivf.spill.HOST-PID.N: cannot create spill file: No such file or directory
== build-nlist-0: exit 2
err: vforge: error: index build: --nlist must be at least 1 (leave it out for the default)
== build-nlist-2p32: exit 2
err: vforge: error: --nlist must be at most 4294967295
== build-nlist-nan: exit 2
err: vforge: error: --nlist expects a non-negative integer, got 'many'
== build-iterations: exit 2
err: vforge: error: index build: --iterations must be at most 1000000
== build-kmeans-stop-2: exit 2
err: vforge: error: index build: --kmeans-stop '2': expected a fraction in 0..1
== build-kmeans-stop-x: exit 2
err: vforge: error: index build: --kmeans-stop 'x': expected a fraction in 0..1
== build-rabitq-bits: exit 2
err: vforge: error: index build: --rabitq-bits needs --type rabitq
== build-id-uuid: exit 2
err: vforge: error: index build: --id-expression 'uuid()' is not deterministic (an index must map rows to the same ids on every build)
== build-id-bad: exit 2
err: vforge: error: id_expression "nope(": unknown function at column 5
== build-column: exit 2
err: vforge: error: CORPUS/rank00/batch_00000000.parquet: no column 'nothere'
== build-unknown-opt: exit 2
err: vforge: error: vforge index build: unknown option '--frobnicate' (see vforge index build --help)
== search-no-queries: exit 2
err: vforge: error: index search: --queries Q is required
== search-no-k: exit 2
err: vforge: error: index search: -k K is required
== search-k-big: exit 2
err: vforge: error: index search: -k must be 1..100000
== search-nprobe-0: exit 2
err: vforge: error: index search: --nprobe must be at least 1
== search-rerank-big: exit 2
err: vforge: error: index search: --rerank is too large
== search-queries-missing: exit 2
err: vforge: error: TMP/none.parquet: cannot open: No such file or directory
== search-column: exit 2
err: vforge: error: TMP/q.parquet: no column 'nothere'
== search-gt-missing: exit 2
err: vforge: error: ground-truth file: TMP/none.parquet: No such file or directory
== search-gt-k: exit 2
err: vforge: error: index search: -k 9 exceeds the 5 hits per query of TMP/gt.parquet
== search-filter-no-corpus: exit 2
err: vforge: error: index search: the queries are filtered; give --corpus URI|CONFIG (the corpus TMP/ok.ivf was built from: its payload is what the filters read)
== search-filter-file: exit 2
err: vforge: error: --filter @TMP/none.json: cannot open: No such file or directory
== search-output-parent-file: exit 1
err: vforge: error: TMP/afile/r.parquet: cannot create temporary file TMP/afile/r.parquet.tmp.HOST-PID.N: Not a directory
== search-flipped: exit 2
err: vforge: error: TMP/flip.ivf: corrupt IVF index (section checksum): checksum mismatch (the file is damaged)
== search-short: exit 2
err: vforge: error: TMP/short.ivf: corrupt IVF index (section header): file is 1080868 bytes, the header says 1080968 (truncated or extended)
== info-flipped: exit 2
err: vforge: error: TMP/flip.ivf: corrupt IVF index (section checksum): checksum mismatch (the file is damaged)
== info-short: exit 2
err: vforge: error: TMP/short.ivf: corrupt IVF index (section header): file is 1080868 bytes, the header says 1080968 (truncated or extended)
== info-dir: exit 1
err: vforge: error: TMP/adir: cannot map: No such device
== info-missing: exit 2
err: vforge: error: TMP/none.ivf: cannot open: No such file or directory
== inspect-missing: exit 2
err: vforge: error: TMP/none.parquet: No such file or directory
== inspect-short: exit 2
err: vforge: error: TMP/short.parquet: not a parquet file: no "PAR1" magic in the last 4 bytes (offset 996)
== inspect-text: exit 2
err: vforge: error: TMP/text.parquet: not a parquet file: no "PAR1" magic in the last 4 bytes (offset 39)
== inspect-text-json: exit 2
err: vforge: error: TMP/text.parquet: not a parquet file: no "PAR1" magic in the last 4 bytes (offset 39)
== inspect-mixed: exit 2
err: vforge: error: TMP/mixed/b.parquet: not a parquet file: no "PAR1" magic in the last 4 bytes (offset 996)
== inspect-mixed-json: exit 2
err: vforge: error: TMP/mixed/b.parquet: not a parquet file: no "PAR1" magic in the last 4 bytes (offset 996)
== inspect-unknown-opt: exit 2
err: vforge: error: vforge inspect: unknown option '--frobnicate' (see vforge inspect --help)
EOT
if diff -u "$tmp/want.txt" "$tmp/got.txt"; then
  echo "all ok: $(grep -c '^== ' "$tmp/got.txt") failure cases as recorded"
else
  echo "FAIL: the transcript above differs from the recorded one (- recorded, + this binary)"
  exit 1
fi
