#!/usr/bin/env bash
# The BLAS is opened on first use, on kernels that match the CPU, and checked before use
# (src/util/blas.c; issue 16 item 3, issue 17 item 1):
#  - the binary does not link OpenBLAS (readelf: no NEEDED entry);
#  - scan, cat and inspect never load it: LD_DEBUG=libs shows no libopenblas, and neither do
#    /proc/<pid>/maps samples taken during a long scan; brute-force and index build do load it,
#    seen by the same two probes (so they can fail);
#  - a library that cannot be loaded (VFORGE_BLAS_LIB=/nonexistent) fails brute-force with a
#    message naming it (exit 2) and does not concern scan;
#  - version --json: blas {library, core, gflops > 0, threads = --threads}, simd, cpu;
#  - OpenBLAS left on a generic core as if it did not know this CPU (the test hook
#    VFORGE_BLAS_TEST_PRETEND_CORE=Prescott, which loads it with that core but marks it as its
#    own detection) is switched to the core CPUID calls for, with one info line, and then runs
#    --threads server threads (fewer when OPENBLAS_NUM_THREADS says so); a core the user set
#    with OPENBLAS_CORETYPE is kept;
#  - stand-in libraries (tests/util/fake_blas.c, built here): a CBLAS under another name is used
#    (its call count); one that answers wrong fails the self-check and vforge's own sgemm takes
#    over (a warning; the library is called by the check only); a generic core that cannot be
#    switched falls back the same way (info line);
#  - brute-force output is byte-identical with every BLAS above and VFORGE_BLAS_LIB=builtin,
#    and index build / search work on the builtin sgemm.
# Needs python3 (standard library only) and cc for the stand-ins.  VFORGE: the binary.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v "$PY" >/dev/null || { echo "skip: no python3"; exit 77; }
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# this test decides which BLAS is loaded: none of the caller's choices leak in
unset VFORGE_BLAS_LIB VFORGE_BLAS_TEST_PRETEND_CORE OPENBLAS_CORETYPE OPENBLAS_VERBOSE || true
cp -r "$here/examples/corpus" "$tmp/c"
C=$tmp/c
jget() { "$PY" -c 'import json,sys; o=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): o=o[k]
print(o)' "$1" "$2"; }

# --- not linked
if command -v readelf >/dev/null; then
  if readelf -d "$V" | grep -q 'NEEDED.*blas'; then fail "the binary links a BLAS: $(readelf -d "$V" | grep NEEDED | grep blas)"; fi
fi

# --- which commands load it: the dynamic loader's own log
"$V" generate-queries "$C" -n 40 --seed 5 2>/dev/null
Q=$C/eval/queries_40.parquet
loads_blas() {
  LD_DEBUG=libs LD_DEBUG_OUTPUT=$tmp/ld "$@" >/dev/null 2>&1 || fail "$* failed"
  local hit=1
  if cat "$tmp"/ld.* | grep -q 'calling init: .*blas'; then hit=0; fi
  rm -f "$tmp"/ld.*
  return $hit
}
loads_blas "$V" scan "$C" && fail "scan loaded the BLAS"
loads_blas "$V" cat "$C" --limit 5 && fail "cat loaded the BLAS"
loads_blas "$V" inspect "$C" && fail "inspect loaded the BLAS"
loads_blas "$V" version && fail "version loaded the BLAS"
loads_blas "$V" brute-force "$C" --queries "$Q" -k 5 --metric manhattan --output "$tmp/l1.parquet" &&
  fail "brute-force --metric manhattan (no sgemm) loaded the BLAS"
loads_blas "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf0.parquet" ||
  fail "brute-force did not load the BLAS (the probe is blind?)"
loads_blas "$V" index build "$C" --type sq8 --nlist 8 --output "$tmp/i0.ivf" ||
  fail "index build did not load the BLAS"

# --- the same during a long scan, from outside: /proc/<pid>/maps and the thread count
mkdir "$tmp/big"
for i in $(seq 1 150); do
  for f in "$C"/rank00/*.parquet; do ln "$f" "$tmp/big/$(printf %04d "$i")_$(basename "$f")" 2>/dev/null || cp "$f" "$tmp/big/$(printf %04d "$i")_$(basename "$f")"; done
done
# sample PID until it exits: "<samples> <samples with a BLAS mapped> <most threads seen>"
sample() {
  local pid=$1 n=0 hit=0 most=0 c
  while kill -0 "$pid" 2>/dev/null; do
    if grep -q 'libopenblas\|libblas\|libcblas' "/proc/$pid/maps" 2>/dev/null; then hit=$((hit + 1)); fi
    c=$( (ls "/proc/$pid/task" 2>/dev/null || true) | wc -l)
    if [ "$c" -gt "$most" ]; then most=$c; fi
    n=$((n + 1))
    sleep 0.01
  done
  echo "$n $hit $most"
}
"$V" --threads 1 scan "$tmp/big" >/dev/null 2>&1 &
pid=$!
sample "$pid" >"$tmp/sample"
wait "$pid" || fail "the long scan failed"
read -r n hit most <"$tmp/sample"
echo "long scan: $n samples, BLAS mapped in $hit, at most $most threads (--threads 1)"
[ "$hit" = 0 ] || fail "scan mapped a BLAS library ($hit of $n samples)"
"$V" --threads 1 brute-force "$tmp/big" --queries "$Q" -k 5 --output "$tmp/bigbf.parquet" >/dev/null 2>&1 &
pid=$!
sample "$pid" >"$tmp/sample"
wait "$pid" || fail "the long brute-force failed"
read -r n2 hit2 most2 <"$tmp/sample"
echo "long brute-force: $n2 samples, BLAS mapped in $hit2, at most $most2 threads"
if [ "$n2" -ge 3 ]; then [ "$hit2" -ge 1 ] || fail "brute-force never showed the BLAS in its maps (the probe is blind?)"; fi

# --- no library: an error where one is needed, nothing where none is
set +e
VFORGE_BLAS_LIB=/nonexistent/libopenblas.so.0 "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/x.parquet" 2>"$tmp/nolib.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "brute-force with an unloadable VFORGE_BLAS_LIB: exit $rc, want 2"
grep -q '/nonexistent/libopenblas.so.0' "$tmp/nolib.err" || fail "the error does not name the library: $(cat "$tmp/nolib.err")"
grep -q 'VFORGE_BLAS_LIB=builtin' "$tmp/nolib.err" || fail "the error does not say what to do"
VFORGE_BLAS_LIB=/nonexistent/libopenblas.so.0 "$V" scan "$C" >/dev/null 2>&1 || fail "scan needs no BLAS but failed without one"

# --- version --json
"$V" --threads 1 version --json >"$tmp/v1.json" 2>"$tmp/v1.err"
"$PY" - "$tmp/v1.json" <<'PY' || fail "version --json: $(cat "$tmp/v1.json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert isinstance(o["version"], str) and o["version"], o
b = o["blas"]
assert b["library"] and b["core"] and b["source"] in ("detected", "environment", "vforge", "builtin", "fallback"), b
assert isinstance(b["gflops"], (int, float)) and b["gflops"] > 0, b
assert b["threads"] == 1, b
assert o["simd"] in ("scalar", "avx2", "avx512"), o
assert isinstance(o["cpu"], str) and o["cpu"], o
PY
core_detected=$(jget "$tmp/v1.json" blas.core)
echo "BLAS: $(jget "$tmp/v1.json" blas.library), core $core_detected, $(jget "$tmp/v1.json" blas.gflops) GFLOP/s at 1 thread"
"$V" version >"$tmp/v.txt"
grep -q '^vforge ' "$tmp/v.txt" || fail "plain version: $(cat "$tmp/v.txt")"

is_openblas=0
case "$(jget "$tmp/v1.json" blas.library)" in *openblas*) is_openblas=1 ;; esac

# --- a generic core where the CPU runs better kernels
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
vendor=$(grep -m1 '^vendor_id' /proc/cpuinfo || true)
has() { case " $flags " in *" $1 "*) return 0 ;; esac; return 1; }
want=""
if has avx512f && has avx512bw && has avx512dq && has avx512vl; then want="SapphireRapids Cooperlake SkylakeX"
elif has avx2 && has fma; then
  case "$vendor" in *AMD* | *Hygon*) want="Zen" ;; *) want="Haswell" ;; esac
fi
"$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_ref.parquet" 2>/dev/null
if [ "$is_openblas" = 1 ] && [ -n "$want" ]; then
  VFORGE_BLAS_TEST_PRETEND_CORE=Prescott "$V" version --json >"$tmp/vp.json" 2>"$tmp/vp.err"
  core=$(jget "$tmp/vp.json" blas.core)
  [ "$(jget "$tmp/vp.json" blas.source)" = vforge ] || fail "generic core: source $(jget "$tmp/vp.json" blas.source), want vforge"
  case " $want " in *" $core "*) ;; *) fail "generic core Prescott switched to '$core', want one of: $want" ;; esac
  grep -q "info: BLAS: OpenBLAS chose its Prescott kernels .*switched to its $core kernels" "$tmp/vp.err" ||
    fail "no info line about the switch: $(cat "$tmp/vp.err")"
  # the switch runs before OpenBLAS has a server thread (one racing it crashed CI under ASan);
  # the --threads count is started after it
  VFORGE_BLAS_TEST_PRETEND_CORE=Prescott "$V" --threads 2 version --json >"$tmp/vp2.json" 2>/dev/null
  [ "$(jget "$tmp/vp2.json" blas.threads)" = 2 ] && [ "$(jget "$tmp/vp2.json" blas.source)" = vforge ] ||
    fail "after a switch at --threads 2: $(cat "$tmp/vp2.json")"
  VFORGE_BLAS_TEST_PRETEND_CORE=Prescott OPENBLAS_NUM_THREADS=1 "$V" --threads 2 version --json >"$tmp/vp1.json" 2>/dev/null
  [ "$(jget "$tmp/vp1.json" blas.threads)" = 1 ] || fail "OPENBLAS_NUM_THREADS=1 not kept: $(cat "$tmp/vp1.json")"
  VFORGE_BLAS_TEST_PRETEND_CORE=Prescott "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_p.parquet" 2>"$tmp/bfp.err"
  [ "$(grep -c 'BLAS:' "$tmp/bfp.err")" = 1 ] || fail "brute-force should log exactly one BLAS line: $(cat "$tmp/bfp.err")"
  cmp -s "$tmp/bf_ref.parquet" "$tmp/bf_p.parquet" || fail "brute-force output changed with the switched core"
  # the user's choice is kept, and said so
  OPENBLAS_CORETYPE=Prescott "$V" version --json >"$tmp/vu.json" 2>"$tmp/vu.err"
  [ "$(jget "$tmp/vu.json" blas.core)" = Prescott ] || fail "OPENBLAS_CORETYPE=Prescott not kept: $(cat "$tmp/vu.json")"
  [ "$(jget "$tmp/vu.json" blas.source)" = environment ] || fail "user core: source $(jget "$tmp/vu.json" blas.source)"
  grep -q 'OPENBLAS_CORETYPE=Prescott (set in the environment).*kept' "$tmp/vu.err" || fail "no note on the user's core: $(cat "$tmp/vu.err")"
  # the hook never overrides the user
  OPENBLAS_CORETYPE=Haswell VFORGE_BLAS_TEST_PRETEND_CORE=Prescott "$V" version --json >"$tmp/vh.json" 2>/dev/null
  [ "$(jget "$tmp/vh.json" blas.core)" = Haswell ] || fail "the test hook overrode OPENBLAS_CORETYPE"
  # a core that already fits is left alone; on a CPU this OpenBLAS does not know (it picks a
  # generic core by itself, e.g. 0.3.21 on some Cooperlake VMs) the real switch is checked instead
  case "$(jget "$tmp/v1.json" blas.source)" in
    detected)
      [ ! -s "$tmp/v1.err" ] || fail "a fitting core logged something: $(cat "$tmp/v1.err")" ;;
    vforge)
      case " $want " in *" $core_detected "*) ;; *) fail "OpenBLAS's generic core switched to '$core_detected', want one of: $want" ;; esac
      grep -q "info: BLAS: OpenBLAS chose its [A-Za-z0-9]* kernels .*switched to its $core_detected kernels" "$tmp/v1.err" ||
        fail "the real switch logged no info line: $(cat "$tmp/v1.err")"
      [ "$(grep -c 'BLAS:' "$tmp/v1.err")" = 1 ] || fail "the real switch should log exactly one BLAS line: $(cat "$tmp/v1.err")"
      echo "this CPU: OpenBLAS's own choice was generic; vforge switched it to $core_detected" ;;
    *) fail "OpenBLAS's own core: source $(jget "$tmp/v1.json" blas.source), want detected or vforge: $(cat "$tmp/v1.json")" ;;
  esac
else
  echo "skip part: generic-core switch (BLAS is not OpenBLAS, or the CPU has no AVX2/FMA)"
fi

# --- stand-in libraries
if command -v cc >/dev/null; then
  cc -shared -fPIC -O1 -o "$tmp/libfake_cblas.so.7" "$here/tests/util/fake_blas.c"
  cc -shared -fPIC -O1 -DFAKE_WRONG -o "$tmp/libwrong_cblas.so" "$here/tests/util/fake_blas.c"
  cc -shared -fPIC -O1 -DFAKE_GENERIC -o "$tmp/libgeneric_blas.so" "$here/tests/util/fake_blas.c"
  # another name, another CBLAS: used for the products themselves
  FAKE_BLAS_COUNT=$tmp/n_ok VFORGE_BLAS_LIB=$tmp/libfake_cblas.so.7 "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_f.parquet" 2>"$tmp/f.err"
  cmp -s "$tmp/bf_ref.parquet" "$tmp/bf_f.parquet" || fail "brute-force output changed on another CBLAS"
  [ "$(cat "$tmp/n_ok")" -gt 2 ] || fail "the CBLAS named by VFORGE_BLAS_LIB was not used ($(cat "$tmp/n_ok") calls)"
  if grep -q 'BLAS' "$tmp/f.err"; then fail "a working CBLAS logged something: $(cat "$tmp/f.err")"; fi
  VFORGE_BLAS_LIB=$tmp/libfake_cblas.so.7 "$V" version --json >"$tmp/vf.json" 2>/dev/null
  [ "$(jget "$tmp/vf.json" blas.core)" = unknown ] || fail "a plain CBLAS has no core name: $(cat "$tmp/vf.json")"
  case "$(jget "$tmp/vf.json" blas.library)" in *libfake_cblas.so.7) ;; *) fail "library: $(cat "$tmp/vf.json")" ;; esac
  # wrong answers: the self-check catches them, vforge's own sgemm computes
  FAKE_BLAS_COUNT=$tmp/n_wrong VFORGE_BLAS_LIB=$tmp/libwrong_cblas.so "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_w.parquet" 2>"$tmp/w.err"
  grep -q 'warning: BLAS: .*libwrong_cblas.so.*failed the sgemm self-check.*using vforge.s own sgemm' "$tmp/w.err" ||
    fail "no warning about the failed self-check: $(cat "$tmp/w.err")"
  [ "$(grep -c 'BLAS:' "$tmp/w.err")" = 1 ] || fail "more than one BLAS line: $(cat "$tmp/w.err")"
  [ "$(cat "$tmp/n_wrong")" -le 2 ] || fail "the wrong BLAS was used after its self-check failed ($(cat "$tmp/n_wrong") calls)"
  cmp -s "$tmp/bf_ref.parquet" "$tmp/bf_w.parquet" || fail "brute-force output changed on the fallback sgemm"
  VFORGE_BLAS_LIB=$tmp/libwrong_cblas.so "$V" version --json >"$tmp/vw.json" 2>/dev/null
  [ "$(jget "$tmp/vw.json" blas.source)" = fallback ] || fail "fallback: $(cat "$tmp/vw.json")"
  case "$(jget "$tmp/vw.json" blas.core)" in builtin-*) ;; *) fail "fallback core: $(cat "$tmp/vw.json")" ;; esac
  # a generic core that cannot be switched (no DYNAMIC_ARCH entry points)
  if [ -n "$want" ]; then
    VFORGE_BLAS_LIB=$tmp/libgeneric_blas.so "$V" version --json >"$tmp/vg.json" 2>"$tmp/vg.err"
    [ "$(jget "$tmp/vg.json" blas.source)" = fallback ] || fail "unswitchable generic core: $(cat "$tmp/vg.json")"
    grep -q 'info: BLAS: .*libgeneric_blas.so runs its Prescott kernels .*cannot switch' "$tmp/vg.err" ||
      fail "no info line about the unswitchable core: $(cat "$tmp/vg.err")"
    # a DYNAMIC_ARCH stand-in on a generic core: switched while it has no server thread (it
    # aborts otherwise), then given --threads of them
    cc -shared -fPIC -O1 -DFAKE_DYNAMIC -o "$tmp/libdyn_blas.so" "$here/tests/util/fake_blas.c"
    VFORGE_BLAS_LIB=$tmp/libdyn_blas.so "$V" --threads 2 version --json >"$tmp/vd.json" 2>"$tmp/vd.err" ||
      fail "the switch on a DYNAMIC_ARCH stand-in: $(cat "$tmp/vd.err")"
    core=$(jget "$tmp/vd.json" blas.core)
    [ "$(jget "$tmp/vd.json" blas.source)" = vforge ] && [ "$(jget "$tmp/vd.json" blas.threads)" = 2 ] ||
      fail "DYNAMIC_ARCH stand-in: $(cat "$tmp/vd.json")"
    case " $want " in *" $core "*) ;; *) fail "the stand-in's Prescott switched to '$core', want one of: $want" ;; esac
    FAKE_BLAS_COUNT=$tmp/n_dyn VFORGE_BLAS_LIB=$tmp/libdyn_blas.so "$V" --threads 2 brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_d.parquet" 2>"$tmp/bfd.err" ||
      fail "brute-force on the DYNAMIC_ARCH stand-in: $(cat "$tmp/bfd.err")"
    cmp -s "$tmp/bf_ref.parquet" "$tmp/bf_d.parquet" || fail "brute-force output changed on the DYNAMIC_ARCH stand-in"
  fi
else
  echo "skip part: no cc for the stand-in libraries"
fi

# --- vforge's own sgemm on demand
VFORGE_BLAS_LIB=builtin "$V" brute-force "$C" --queries "$Q" -k 5 --output "$tmp/bf_b.parquet" 2>/dev/null
cmp -s "$tmp/bf_ref.parquet" "$tmp/bf_b.parquet" || fail "brute-force output changed on VFORGE_BLAS_LIB=builtin"
for t in sq8 rabitq; do
  VFORGE_BLAS_LIB=builtin "$V" index build "$C" --type $t --nlist 8 --output "$tmp/ib_$t.ivf" 2>/dev/null ||
    fail "index build --type $t on the builtin sgemm"
  VFORGE_BLAS_LIB=builtin "$V" index search "$tmp/ib_$t.ivf" --queries "$Q" -k 5 --output "$tmp/is_$t.parquet" 2>/dev/null ||
    fail "index search ($t) on the builtin sgemm"
done
echo "ok"
