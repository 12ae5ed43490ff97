#!/usr/bin/env bash
# One core taken by another process (issue 15 item 3): `index build` and `brute-force` on
# Fashion-MNIST with --threads 2, idle and with a busy loop pinned to one core by taskset (vforge
# itself unpinned), for this tree's binary and a baseline binary built from a git revision, all in
# the same run.  Prints the seconds of each and the ratio busy/idle.  With work handed out in
# chunks (the pool, vforge/pool.h) the busy core costs about its share: ~1.33x on 2 cores, target
# <= 1.5x; a static split of the work into one slice per thread waits for the slowed slice: ~2x.
# It also checks that both binaries wrote byte-identical outputs (same index file, same ground
# truth).
#
# Usage: bench/contention/run.sh [VFORGE]      (default build/vforge)
# Environment:
#   BASE_REV      the baseline revision (default: git merge-base HEAD main), built into a
#                 temporary directory (git archive + cmake, the vforge target only, -j2)
#   BASE_VFORGE   a baseline binary already built (skips the build; BASE_REV is then a label)
#   THREADS       vforge --threads (default 2)
#   BUSY_CPU      the core the busy loop is pinned to (default 0)
#   FMNIST        train (60000 x 784, default) or t10k (10000 x 784: a quick check)
#   NQ, K         brute-force queries and K (default 1000, 100)
#   TYPE, NLIST   index build type and nlist (default sq8, 256)
#   RUNS          runs of each measurement, the best kept (default 3)
#   WORK          a directory to keep the corpus and the baseline build in between runs
# A quick end-to-end check (not a measurement):
#   FMNIST=t10k NQ=100 NLIST=32 RUNS=1 bench/contention/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
V=$(realpath "${1:-$root/build/vforge}")
THREADS=${THREADS:-2}
BUSY_CPU=${BUSY_CPU:-0}
FMNIST=${FMNIST:-train}
NQ=${NQ:-1000}
K=${K:-100}
TYPE=${TYPE:-sq8}
NLIST=${NLIST:-256}
RUNS=${RUNS:-3}
FM=/usr/share/datasets/fashion-mnist
IDX=$FM/$FMNIST-images-idx3-ubyte.gz
[ -x "$V" ] || { echo "no vforge binary at $V (build first, or pass one)"; exit 2; }
[ -f "$IDX" ] || { echo "need dataset-fashion-mnist ($IDX; scripts/install-deps.sh installs it)"; exit 77; }
command -v taskset > /dev/null || { echo "need taskset (util-linux)"; exit 77; }
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || { echo "need at least 2 CPUs (this process may use $ncpu)"; exit 77; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$(realpath "$WORK"); else work=$(mktemp -d); fi
busy_pid=
cleanup() {
  [ -n "$busy_pid" ] && kill "$busy_pid" 2> /dev/null || true
  [ -z "${WORK:-}" ] && rm -rf "$work"
  return 0
}
trap cleanup EXIT

# the baseline binary
if [ -n "${BASE_VFORGE:-}" ]; then
  B=$(realpath "$BASE_VFORGE")
  BASE_REV=${BASE_REV:-given}
else
  BASE_REV=${BASE_REV:-$(git -C "$root" merge-base HEAD main)}
  rev=$(git -C "$root" rev-parse --short "$BASE_REV")
  B=$work/base-$rev/build/vforge
  if [ ! -x "$B" ]; then
    echo "building the baseline $rev into $work/base-$rev ..." >&2
    rm -rf "$work/base-$rev"
    mkdir -p "$work/base-$rev/src"
    git -C "$root" archive "$BASE_REV" | tar -x -C "$work/base-$rev/src"
    cmake -S "$work/base-$rev/src" -B "$work/base-$rev/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DVFORGE_PYTHON=OFF > /dev/null
    cmake --build "$work/base-$rev/build" --target vforge -j2 > "$work/base-$rev/build.log" 2>&1 ||
      { tail -20 "$work/base-$rev/build.log"; echo "the baseline did not build"; exit 1; }
  fi
fi

# the corpus and the queries (once; both binaries read the same files)
C=$work/fm_$FMNIST
if [ ! -d "$C" ]; then
  "$V" --quiet convert "$IDX" --output "$C"
fi
Q=$work/queries_${FMNIST}_$NQ.parquet
[ -f "$Q" ] || "$V" --quiet generate-queries "$C" -n "$NQ" --seed 1 --output "$Q"

busy_start() {
  taskset -c "$BUSY_CPU" bash -c 'while :; do :; done' &
  busy_pid=$!
  sleep 0.5 # let the scheduler see it
}
busy_stop() {
  kill "$busy_pid" 2> /dev/null || true
  wait "$busy_pid" 2> /dev/null || true
  busy_pid=
}

# one timed command; prints seconds
timed() {
  local t0 t1
  t0=$EPOCHREALTIME
  "$@" > /dev/null 2> "$work/last.err" || { cat "$work/last.err" >&2; echo "failed: $*" >&2; exit 1; }
  t1=$EPOCHREALTIME
  echo "$t1 - $t0" | bc -l
}

run_cmd() { # BINARY TAG WHAT
  local bin=$1 tag=$2 what=$3
  case $what in
    index) timed "$bin" --quiet --threads "$THREADS" index build "$C" --output "$work/$tag.ivf" \
             --type "$TYPE" --nlist "$NLIST" --metric euclid ;;
    bf) timed "$bin" --quiet --threads "$THREADS" brute-force "$C" --queries "$Q" -k "$K" \
          --metric euclid --output "$work/$tag.bf.parquet" ;;
  esac
}

declare -A best
min() { echo "if ($1 < $2) $1 else $2" | bc -l; }
for run in $(seq 1 "$RUNS"); do
  for cond in idle busy; do
    [ "$cond" = busy ] && busy_start
    for what in index bf; do
      for side in new base; do
        bin=$V
        [ "$side" = base ] && bin=$B
        s=$(run_cmd "$bin" "$side" "$what")
        key=$what/$side/$cond
        if [ -z "${best[$key]:-}" ]; then best[$key]=$s; else best[$key]=$(min "${best[$key]}" "$s"); fi
        printf 'run %d %-5s %-5s %-4s %8.3f s\n' "$run" "$what" "$side" "$cond" "$s" >&2
      done
    done
    [ "$cond" = busy ] && busy_stop
  done
done

same_index=no same_bf=no
cmp -s "$work/new.ivf" "$work/base.ivf" && same_index=yes
cmp -s "$work/new.bf.parquet" "$work/base.bf.parquet" && same_bf=yes
rows=$("$V" inspect "$C" --json 2> /dev/null | sed -n 's/.*"rows":\([0-9]*\).*/\1/p' | head -1)
echo "contention: Fashion-MNIST $FMNIST (${rows:-?} x 784), --threads $THREADS, busy loop pinned to CPU $BUSY_CPU of $ncpu, best of $RUNS"
echo "new: $V"
echo "base: $B ($BASE_REV)"
printf '| %-40s | %-6s | %9s | %9s | %10s |\n' command binary "idle s" "busy s" "busy/idle"
printf '|%s|%s|%s|%s|%s|\n' ------------------------------------------ -------- ----------- ----------- ------------
for what in index bf; do
  label="index build --type $TYPE --nlist $NLIST"
  [ "$what" = bf ] && label="brute-force $NQ queries -k $K"
  for side in new base; do
    i=${best[$what/$side/idle]} b=${best[$what/$side/busy]}
    r=$(echo "$b / $i" | bc -l)
    printf '| %-40s | %-6s | %9.3f | %9.3f | %9.2fx |\n' "$label" "$side" "$i" "$b" "$r"
  done
done
for what in index bf; do
  r=$(echo "${best[$what/new/busy]} / ${best[$what/new/idle]}" | bc -l)
  ok=$(echo "$r <= 1.5" | bc -l)
  printf '%s new busy/idle %.2fx: target <= 1.5x %s\n' "$what" "$r" "$([ "$ok" = 1 ] && echo met || echo 'NOT MET')"
done
echo "outputs identical to the baseline: index file $same_index, brute-force ground truth $same_bf"
