#!/usr/bin/env bash
# README.md cannot drift from what vforge does (issue 14): every sh / console / yaml / python block
# of README.md is executed, top to bottom, in a scratch copy of the repository with `vforge` (this
# build) on PATH, build/vforge and build/demo/fashion-mnist (a small `make demo` corpus) in place,
# against the test services when tests/services/with-services.sh runs (S3, HF stand-in, Slurm; the
# Qdrant stand-in is started here when a block needs it).  Documented output (console blocks) is
# compared, `...` matching anything.  Marked blocks are skipped with their reason printed.  The
# convention (markers, fixtures) is in README.md "Tests" and tests/docs/readme_test.py.
# First the runner's own test: tests/docs/selftest/good.md must pass, every block of bad.md must
# fail (among them the three README examples issue 14 found broken), misplaced or unknown markers
# and fences without a language must be refused.
#   VF_README=FILE checks another file instead of README.md (the self-test still runs);
#   VF_README_KEEP=1 keeps the scratch directory (each block's script, stdout and stderr in state/).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
PY3=/usr/bin/python3
[ -x "$PY3" ] || PY3=$(command -v python3) || { echo "python3 not installed: skipped"; exit 77; }
[ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] ||
  { echo "Fashion-MNIST not installed (Debian dataset-fashion-mnist; README blocks use it): skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/readme-test.XXXXXX" 2>/dev/null || mktemp -d)
if [ -n "${VF_README_KEEP:-}" ]; then echo "readme: scratch directory $tmp kept"; else trap 'rm -rf "$tmp"' EXIT; fi
runner="$src/tests/docs/readme_test.py"
# the Python blocks import this build's extension (build/python beside the binary), as
# `make build` leaves it; a pip-installed package in $VF_PY is found without it
[ -z "${VF_PYTHONPATH:-}" ] && [ -d "$(dirname "$V")/python/vforge" ] && export VF_PYTHONPATH="$(cd "$(dirname "$V")/python" && pwd)"
st="$src/tests/docs/selftest"
fails=0
fail() { echo "FAIL (self-test): $*"; fails=$((fails + 1)); }
# self NAME README: run the runner on README (stdout+stderr in $tmp/NAME.log), print its exit status
self() { "$PY3" "$runner" --readme "$2" --src "$src" --work "$tmp/$1" > "$tmp/$1.log" 2>&1; echo $?; }

rc=$(self good "$st/good.md")
n_code=$(grep -c '^```[a-z]' "$st/good.md")
[ "$rc" = 0 ] || fail "good.md: exit $rc: $(cat "$tmp/good.log")"
grep -q "^SKIPPED good.md:4 (sh): false  \[shows a marker being skipped\]" "$tmp/good.log" || fail "good.md: the skip marker"
grep -Eq "^(PASSED  good.md:[0-9]+ \(python\)|SKIPPED good.md:[0-9]+ \(python\): import vforge  \[needs the vforge Python package\])" \
  "$tmp/good.log" || fail "good.md: the python block neither ran nor was skipped for want of the package"
# one text block, one skip marker, and the python block run or skipped
grep -q "^readme: $n_code code blocks (1 text, not executed); $((n_code - 3)) run, $((n_code - 3)) passed, 0 failed, 2 skipped" "$tmp/good.log" ||
  grep -q "^readme: $n_code code blocks (1 text, not executed); $((n_code - 2)) run, $((n_code - 2)) passed, 0 failed, 1 skipped" "$tmp/good.log" ||
  fail "good.md: summary: $(tail -3 "$tmp/good.log")"

rc=$(self bad "$st/bad.md")
n_code=$(grep -c '^```[a-z]' "$st/bad.md")
n_failed=$(grep -c '^FAILED ' "$tmp/bad.log")
line=$(grep -n '^vforge no-such-command' "$st/bad.md" | cut -d: -f1)
[ "$rc" = 1 ] && [ "$n_failed" = "$n_code" ] || fail "bad.md: exit $rc, $n_failed of $n_code blocks failed: $(cat "$tmp/bad.log")"
for want in 'differs from the documented one' 'option --with-id needs a value' 'YAML syntax error' 'no_such_key' \
  "at bad.md line $line: vforge no-such-command" 'exit 0 (want 2)' "replace: 'not-in-the-block' does not occur" 'still running after 1 s'; do
  grep -qF -- "$want" "$tmp/bad.log" || fail "bad.md: no '$want' in the report"
done
rm -rf "$tmp/bad" "$tmp/good"

# refused before anything runs: NAME, README text, expected message
refuse() {
  printf '%b' "$2" > "$tmp/$1.md"
  rc=$(self "$1" "$tmp/$1.md")
  [ "$rc" = 1 ] && grep -qF -- "$3" "$tmp/$1.log" || fail "$1: exit $rc, want 1 with '$3': $(cat "$tmp/$1.log")"
}
refuse gap '<!-- readme-test: skip: x -->\n\n```sh\ntrue\n```\n' 'gap.md:1: readme-test marker not directly above a code fence'
refuse prose '<!-- readme-test: skip: x -->\ntext\n```sh\ntrue\n```\n' 'prose.md:1: readme-test marker not directly above'
refuse dangling 'text\n<!-- readme-test: skip: x -->\n' 'dangling.md:2: readme-test marker not directly above'
refuse unknown '<!-- readme-test: skipp: x -->\n```sh\ntrue\n```\n' "unknown readme-test directive 'skipp'"
refuse novalue '<!-- readme-test: needs -->\n```sh\ntrue\n```\n' "directive 'needs' needs a value"
refuse number '<!-- readme-test: timeout: soon -->\n```sh\ntrue\n```\n' "readme-test 'timeout' wants a number"
refuse bare '```\nvforge version\n```\n' 'bare.md:1: code fence without a language'
refuse lang '```rust\nfn main() {}\n```\n' "unknown code block language 'rust'"
refuse unclosed '```sh\ntrue\n' 'unclosed.md:1: code fence never closed'
[ "$fails" = 0 ] && echo "self-test: good.md passed, every block of bad.md failed, malformed markers refused" ||
  { echo "self-test: $fails failures"; exit 1; }

"$PY3" "$runner" --readme "${VF_README:-$src/README.md}" --src "$src" --work "$tmp/readme"
