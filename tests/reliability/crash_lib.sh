# Shared by the crash-safety tests (sourced).  crash_loop NAME N OUT REF -- CMD...
# Runs CMD (which writes OUT) N times, killing it with SIGKILL after a random delay (seeded with
# $CRASH_SEED, spread over 5..95% of the reference run's duration $REF_MS) and checks that OUT
# is then either absent or byte-identical to REF (a file that looks complete is complete); then
# reruns CMD to completion over whatever the kill left behind (temp files, spills) and requires
# OUT == REF.  Counts kills that landed before / after the output appeared.  Sets
# crash_kills, crash_early, crash_late, crash_debris, crash_fail.
crash_loop() {
  local name=$1 n=$2 out=$3 ref=$4; shift 5
  RANDOM=${CRASH_SEED:-7}
  crash_kills=0 crash_early=0 crash_late=0 crash_debris=0 crash_fail=0
  for i in $(seq "$n"); do
    rm -f "$out"
    local ms=$(( REF_MS / 20 + (RANDOM % (REF_MS * 9 / 10 + 1)) ))
    "$@" > /dev/null 2>&1 &
    local pid=$!
    sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    if kill -KILL "$pid" 2>/dev/null; then crash_kills=$((crash_kills + 1)); fi
    wait "$pid" 2>/dev/null
    if [ -e "$out" ]; then
      crash_late=$((crash_late + 1))
      cmp -s "$out" "$ref" || { echo "FAIL: $name: kill $i after ${ms} ms left $out looking complete but different from the reference"; crash_fail=$((crash_fail + 1)); }
    else
      crash_early=$((crash_early + 1))
    fi
    local d
    d=$(find "$(dirname "$out")" -maxdepth 1 -newer "$ref" -name "$(basename "$out")*" ! -name "$(basename "$out")" | wc -l)
    crash_debris=$((crash_debris + d))
    if ! "$@" > /dev/null 2>"$out.err.$i"; then
      echo "FAIL: $name: rerun after kill $i (${ms} ms) failed: $(head -c 400 "$out.err.$i")"; crash_fail=$((crash_fail + 1))
    elif ! cmp -s "$out" "$ref"; then
      echo "FAIL: $name: rerun after kill $i (${ms} ms) differs from the uninterrupted run"; crash_fail=$((crash_fail + 1))
    fi
    rm -f "$out.err.$i"
  done
}
# now_ms: milliseconds since the epoch
now_ms() { date +%s%3N; }
