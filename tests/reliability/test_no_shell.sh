#!/usr/bin/env bash
# No shell ever sees a user-controlled string (issue 10, "Security"): `vforge load-dist` (local
# engine, and the Slurm engine when VF_SLURM is set: sbatch gets an argv, not a command line)
# with a corpus directory, store path, config file name and runs directory full of shell syntax
# ($(...), backticks, ;, &, |, >, quotes, spaces, globs) completes with exactly the corpus's point
# set and no injected command runs (no marker file appears).  The sources are also scanned:
# no system(), popen() or "sh -c" in src/ (the one /bin/sh use runs the constant worker script
# with the run directory as its argument).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
"$V" load-dist --help > /dev/null 2>&1 || { echo "SKIP: this vforge has no load-dist"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/noshell.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# injected commands would create files named $mark.N in their working directory (vforge runs in
# $tmp/work; workers in their run directory): all of $tmp, $HOME and /tmp are searched for them
mark="INJ$$"
evil="x \$(touch $mark.1) \`touch $mark.2\`; touch $mark.3 & touch $mark.4 | \"q\" >$mark.5 *"
mkdir -p "$tmp/work"
mkdir -p "$tmp/$evil/corpus" || { echo "FAIL: cannot create a directory with shell syntax in its name"; exit 1; }
cp "$src"/examples/corpus/rank00/*.parquet "$tmp/$evil/corpus/"
yq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/''/g")"; } # YAML single-quoted scalar
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$tmp/$evil/corpus" |
  python3 "$src/tests/load/points.py" corpus id=id text=text > "$tmp/expected.jsonl" || { echo "FAIL: reading the corpus"; exit 1; }
# run ENGINE: load-dist into a store with the same hostile name
run() {
  local eng=$1 store="$tmp/$evil/store-$1" cfg="$tmp/$evil/cfg-$1;\$(touch $mark.6).yaml"
  cat > "$cfg" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource:
  uri: $(yq "$tmp/$evil/corpus")
  payload_fields: {id: id, text: text}
vectorstore:
  type: local
  path: $(yq "$store")
  collection_name: ex
loader: {batch_size: 500}
EOC
  if (cd "$tmp/work" && timeout 300 "$V" load-dist "$cfg" --engine "$eng" --num-shards 2 --runs-dir "$tmp/$evil/runs" --json \
       > "$tmp/$eng.json" 2> "$tmp/$eng.err"); then
    "$V" cat "$store/ex" | python3 "$src/tests/load/points.py" store > "$tmp/$eng.jsonl"
    cmp -s "$tmp/expected.jsonl" "$tmp/$eng.jsonl" && ok "load-dist --engine $eng with shell syntax in every path: $(wc -l < "$tmp/expected.jsonl") points equal the corpus" ||
      fail "$eng: stored points differ from the corpus"
  else
    fail "load-dist --engine $eng exited $?: $(tail -3 "$tmp/$eng.err")"
  fi
  local hits
  hits=$( { find "$tmp" -name "$mark.[0-9]"; find /tmp "$HOME" -maxdepth 1 -name "$mark.[0-9]"; } 2>/dev/null)
  [ -z "$hits" ] && ok "$eng: no injected command ran" || fail "$eng: injected commands ran: $hits"
}
run local
if [ -n "${VF_SLURM:-}" ] && [ -n "${SLURM_CONF:-}" ] && command -v sbatch > /dev/null; then
  run slurm
else
  echo "note: no Slurm (VF_SLURM unset): the slurm engine not checked"
fi
# the sources: no shell with a command line
hits=$(grep -rnE '\b(system|popen)\s*\(|"sh",\s*"-c"|"-c",' "$src/src" --include=*.c | grep -v '^\s*//' || true)
[ -z "$hits" ] && ok "no system(), popen() or sh -c in src/" || fail "shell invocations in src/: $hits"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all no-shell checks passed"
