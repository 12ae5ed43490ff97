#!/usr/bin/env bash
# check-layers.sh — the #include side of the layer rule (docs/DESIGN.md "Layers").
#
#   util <- io <- format <- corpus <- index <- store <- eval <- load <- dist <- cli
#
# A module may include the public headers (include/vforge/*.h) of itself and of the modules to
# its left, and the private headers (src/<module>/*.h) of itself only.  The call side of the same
# rule is held by the build: CMakeLists.txt links every module alone with the ones to its left
# (vforge_layer_<module>, -Wl,--no-undefined), so a call against the order fails to link.
#
# Checked: src/<module>/*.{c,h}, include/vforge/*.h (each header belongs to one module, below),
# python/src/*.{c,h} (a front end above cli: any public header, no private one).  Tests may
# include the private headers of the module they test and are not checked.
#
# Usage: scripts/check-layers.sh [ROOT]   (ROOT: the repository, default: this script's parent)
# Exit 0 when every include keeps the rule; 1 with one "file:line: rule: ..." line per breach.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2

LAYERS=(util io format corpus index store eval load dist cli)
ORDER="util <- io <- format <- corpus <- index <- store <- eval <- load <- dist <- cli"

# the module each public header belongs to
declare -A OWNER=(
  [util.h]=util
  [pool.h]=util
  [io.h]=io
  [format.h]=format [vecfile.h]=format
  [corpus.h]=corpus [config.h]=corpus [filter.h]=corpus [arrow.h]=corpus
  [index.h]=index [ivf.h]=index
  [store.h]=store
  [eval.h]=eval [bench.h]=eval
  [load.h]=load
  [dist.h]=dist
)

declare -A RANK=()
for i in "${!LAYERS[@]}"; do RANK[${LAYERS[$i]}]=$i; done
RANK[python]=${#LAYERS[@]}

fail=0
breach() { # file line rule text
  printf '%s:%s: %s: %s\n' "$1" "$2" "$3" "$4"
  fail=1
}

# check FILE MODULE: every #include "..." of FILE against the rule for MODULE
check() {
  local file=$1 mod=$2 line inc hdr owner dir
  while IFS=: read -r line inc; do
    inc=${inc#*\"}
    inc=${inc%%\"*}
    case $inc in
    ../* | */../*)
      breach "$file" "$line" "relative include" \
        "\"$inc\" climbs out of its folder; include a public header (vforge/...) or one of $mod's own headers"
      ;;
    vforge/*)
      hdr=${inc#vforge/}
      owner=${OWNER[$hdr]:-}
      if [ -z "$owner" ]; then
        breach "$file" "$line" "unassigned header" \
          "vforge/$hdr belongs to no module; add it to OWNER in scripts/check-layers.sh"
      elif [ "${RANK[$owner]}" -gt "${RANK[$mod]}" ]; then
        breach "$file" "$line" "upward include" \
          "$mod includes vforge/$hdr of $owner, a layer to its right; a module may use only the modules to its left ($ORDER)"
      fi
      ;;
    */*)
      dir=${inc%%/*}
      if [ -n "${RANK[$dir]:-}" ] && [ "$dir" != "$mod" ]; then
        breach "$file" "$line" "private header" \
          "$mod includes $inc, a private header of $dir; use $dir's public header (include/vforge) instead"
      fi
      ;;
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file")
}

shopt -s nullglob
for mod in "${LAYERS[@]}"; do
  for f in src/"$mod"/*.c src/"$mod"/*.h; do check "$f" "$mod"; done
done
for d in src/*/; do
  d=${d%/}
  d=${d#src/}
  [ -n "${RANK[$d]:-}" ] || breach "src/$d" 0 "unknown module" "src/$d is not in the layer order ($ORDER)"
done
for f in include/vforge/*.h; do
  hdr=${f##*/}
  owner=${OWNER[$hdr]:-}
  if [ -z "$owner" ]; then
    breach "$f" 1 "unassigned header" "$hdr belongs to no module; add it to OWNER in scripts/check-layers.sh"
    continue
  fi
  check "$f" "$owner"
done
for f in python/src/*.c python/src/*.h; do check "$f" python; done

if [ "$fail" -ne 0 ]; then
  echo "check-layers: the layer rule is broken (docs/DESIGN.md \"Layers\")" >&2
  exit 1
fi
echo "check-layers: ok (${#LAYERS[@]} modules: $ORDER)"
