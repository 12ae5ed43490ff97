#!/usr/bin/env bash
# Decompression bombs and lying page headers (issue 10, "Resource limits"): hand-made parquet
# files (make_page_file.py: one INT32 column, one zstd or gzip page) whose header declares
#  - the true size: decodes (the files are valid, so the refusals below are about the sizes);
#  - 2 GB from a few bytes: refused before allocating (exit 2, "decompression bomb"), also under
#    a 700 MiB address-space limit, where an attempted 2 GB buffer would fail differently;
#  - less than the stream inflates to: refused (exit 2), nothing written past the declared size;
#  - 64 MiB genuinely (a zstd frame of RLE blocks, 2 KB): refused under --memory-budget 16M
#    (exit 1, naming the page and the budget) and decoded without a budget.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bomb.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mk() { python3 "$src/tests/reliability/make_page_file.py" "$tmp/$1.parquet" "$2" "$3" "$4"; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
sanitized=0
if [ -n "${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}" ] || nm "$V" 2>/dev/null | grep -q '__asan_init\|__ubsan'; then sanitized=1; fi
# expect NAME RC PATTERN [global options...]
expect() {
  local name=$1 want=$2 pat=$3; shift 3
  "$V" "$@" scan "$tmp/$name.parquet" --json > "$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq "$want" ] && grep -q -- "$pat" "$tmp/err" "$tmp/out"; then ok "$name: exit $rc: $(head -1 "$tmp/err")"
  else fail "$name: expected exit $want and /$pat/, got $rc: $(cat "$tmp/err")"; fi
}
for c in zstd gzip; do
  mk ok_$c $c 1048576 1048576
  expect ok_$c 0 '"rows":262144'
  mk bomb_$c $c 1048576 2000000000
  expect bomb_$c 2 "page at offset 4: declared uncompressed size 2000000000 bytes .*decompression bomb"
  if [ $sanitized -eq 0 ]; then
    ( ulimit -v 700000; "$V" scan "$tmp/bomb_$c.parquet" > /dev/null 2>"$tmp/err" ); rc=$?
    [ $rc -eq 2 ] && grep -q "decompression bomb" "$tmp/err" && ok "bomb_$c refused under a 700 MiB address-space limit" ||
      fail "bomb_$c under ulimit -v: rc $rc $(cat "$tmp/err")"
  fi
  mk short_$c $c 2097152 1048576
  expect short_$c 2 "decompressed to more than 1048576 bytes\|data is corrupt"
done
mk big_zstd zstd 67108864 67108864
expect big_zstd 1 "page at offset 4: .*memory budget of 16777216" --memory-budget 16M
expect big_zstd 0 '"rows":16777216'
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all decompression-bomb checks passed"
