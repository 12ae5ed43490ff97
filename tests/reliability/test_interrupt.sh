#!/usr/bin/env bash
# Issue 14, defect 6: interrupted runs leave no files behind.
#   SIGINT / SIGTERM, sent once a given stage is running (its progress line seen on stderr):
#   exit 130 / 143, exactly one line "vforge: interrupted (SIG...): <what and how to resume>", no
#   error line, and no temporary left (*.tmp.*, *.spill.*, *.assign.*, staging directories):
#     index build during read, k-means and assign; load run during the load and during finalize
#     (then --resume completes with exactly the corpus's points and no index spill left);
#     brute-force during the scan; convert (the output does not appear); scan.
#   SIGKILL: what a killed run leaves (index spills, a convert staging directory, segment
#   temporaries) is removed by the next run on the same output or collection — only temporaries
#   of this host whose pid is not alive: a live process's and another host's are kept.
# Corpus: Fashion-MNIST t10k (Debian dataset-fashion-mnist), 10k x 784.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "skip: $IDX absent (dataset-fashion-mnist)"; exit 77; }
env --default-signal=INT true 2> /dev/null || { echo "skip: env has no --default-signal (coreutils < 8.31)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/interrupt.XXXXXX" 2>/dev/null || mktemp -d)
live=
trap '[ -n "$live" ] && kill "$live" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0 landed=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
host=$(hostname | tr -d '\n' | tr -c 'A-Za-z0-9' '_')
export VFORGE_PROGRESS_INTERVAL=0.000001 # every progress event on the (piped) stderr: the markers

"$V" convert "$IDX" --output "$tmp/c" --rows-per-file 2500 --row-group-rows 250 2> /dev/null ||
  { echo "FAIL: convert"; exit 1; }
"$V" generate-queries "$tmp/c" -n 500 2> /dev/null || { echo "FAIL: generate-queries"; exit 1; }
Q=$tmp/c/eval/queries_500.parquet
cat > "$tmp/cfg.yaml" <<EOF
vectors:
  image: {type: dense, column: emb, distance: euclid}
datasource: {uri: $tmp/c}
vectorstore: {type: local, path: $tmp/store, collection_name: fm}
loader: {batch_size: 250, prefetch_size: 500, concurrency: 2}
EOF

# temps DIR...: every temporary vforge names "<x>.<tag>.<host>-<pid>.<n>" below DIR
temps() { find "$@" -regextype posix-extended -regex '.*\.(tmp|spill|assign|part)\.[A-Za-z0-9_]+-[0-9]+\.[0-9]+' 2>/dev/null; }

# run_until SIG PATTERN ERR -- CMD...: run CMD (stderr to ERR), send SIG once ERR shows PATTERN;
# sets rc (the exit code) and sent (1 when the signal was sent before CMD ended)
run_until() {
  local sig=$1 pat=$2 errf=$3; shift 4
  # a background job of a script starts with SIGINT ignored (and vforge keeps it so): restore it
  env --default-signal=INT,TERM "$@" > /dev/null 2> "$errf" &
  local pid=$! i=0
  sent=0
  while [ $i -lt 6000 ]; do # 10 minutes at most
    if grep -Eq -- "$pat" "$errf" 2>/dev/null; then kill -"$sig" "$pid" 2>/dev/null && sent=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
    i=$((i + 1))
  done
  { wait "$pid"; } 2> /dev/null
  rc=$?
}

# check_interrupt LABEL SIG WHAT-REGEX DIR...: the exit code, the single message line and no temps
check_interrupt() {
  local label=$1 sig=$2 what=$3 errf=$4; shift 4
  local want=130; [ "$sig" = TERM ] && want=143
  if [ "$sent" -ne 1 ] || [ "$rc" -eq 0 ]; then
    echo "note: $label: the run ended before the signal (exit $rc)"
  else
    landed=$((landed + 1))
    [ "$rc" -eq "$want" ] || fail "$label: exit $rc after SIG$sig, want $want: $(tail -2 "$errf")"
    local n
    n=$(grep -c '^vforge: interrupted' "$errf")
    [ "$n" -eq 1 ] || fail "$label: $n 'interrupted' lines"
    grep -Eq "^vforge: interrupted \\(SIG$sig\\): $what" "$errf" || fail "$label: the message does not say what stopped and how to resume: $(grep interrupted "$errf")"
    grep -q '^vforge: error' "$errf" && fail "$label: an error line: $(grep '^vforge: error' "$errf")"
  fi
  local left
  left=$(temps "$@")
  [ -z "$left" ] || fail "$label: temporaries left: $left"
  [ "$sent" -eq 1 ] && [ "$rc" -ne 0 ] && [ -z "$left" ] && ok "$label: exit $rc, one message line, no temporary left"
}

# ---- index build, at three stages
mkdir -p "$tmp/ix"
for point in "INT read:" "TERM k-means:" "INT assign:"; do
  sig=${point%% *} stage=${point#* }
  run_until "$sig" "^vforge: index build $stage" "$tmp/ib.err" -- "$V" index build "$tmp/c" --output "$tmp/ix/x.ivf" --type sq8 --nlist 100
  check_interrupt "index build, SIG$sig during ${stage%:}" "$sig" 'index build of .*x.ivf stopped.*run the command again' "$tmp/ib.err" "$tmp/ix"
  [ "$rc" -ne 0 ] && [ -e "$tmp/ix/x.ivf" ] && fail "index build, SIG$sig during ${stage%:}: the index file exists"
done

# ---- load run: during the load, then during finalize; --resume completes exactly
run_until INT '^vforge: load: [0-9]*[1-9][0-9]* rows' "$tmp/ld.err" -- "$V" load run "$tmp/cfg.yaml"
check_interrupt "load run, SIGINT during the load" INT 'load run of .* resume with: vforge load run .*cfg.yaml --resume' "$tmp/ld.err" "$tmp/store"
if [ "$sent" -eq 1 ] && [ "$rc" -ne 0 ]; then
  run_until TERM '^vforge: finalize (k-means|assign)' "$tmp/ld2.err" -- "$V" load run "$tmp/cfg.yaml" --resume
  check_interrupt "load run --resume, SIGTERM during finalize" TERM 'load run of .*--resume' "$tmp/ld2.err" "$tmp/store"
  "$V" load run "$tmp/cfg.yaml" --resume 2> "$tmp/ld3.err" > /dev/null || fail "the last --resume failed: $(tail -2 "$tmp/ld3.err")"
  grep -q "collection 'fm' holds 10000 points (the load sent 10000)" "$tmp/ld3.err" ||
    fail "after the interruptions the collection does not hold exactly the corpus: $(grep holds "$tmp/ld3.err")"
  left=$(temps "$tmp/store"; find "$tmp/store" -name '*.spill.*' -o -name '*.assign.*')
  [ -z "$left" ] && ok "load run: resumed after SIGINT and SIGTERM, exactly 10000 points, no temporary or spill left" ||
    fail "after a successful --resume: left $left"
fi

# ---- brute-force, convert, scan
run_until INT '^vforge: brute-force: [0-9]*[1-9][0-9]* rows' "$tmp/bf.err" -- "$V" brute-force "$tmp/c" --queries "$Q" -k 100 --metric euclid
check_interrupt "brute-force, SIGINT during the scan" INT 'brute-force stopped before writing its ground truth' "$tmp/bf.err" "$tmp/c"
[ "$rc" -ne 0 ] && ls "$tmp/c/eval" | grep -q brute_force && fail "brute-force: an output file after the interruption"
run_until TERM '^vforge: convert: [0-9]*[1-9][0-9]* rows' "$tmp/cv.err" -- "$V" convert "$IDX" --output "$tmp/conv/out" --rows-per-file 1000 --row-group-rows 100
check_interrupt "convert, SIGTERM while writing" TERM 'convert to .*out stopped' "$tmp/cv.err" "$tmp/conv"
[ "$rc" -ne 0 ] && [ -e "$tmp/conv/out" ] && fail "convert: the output directory exists after the interruption: $(ls "$tmp/conv/out" | head -3)"
run_until INT '^vforge: scan: ' "$tmp/sc.err" -- "$V" --threads 1 scan "$tmp/c"
check_interrupt "scan, SIGINT" INT 'scan stopped' "$tmp/sc.err" "$tmp/c"

[ "$landed" -ge 5 ] || fail "only $landed interruptions landed while the runs were alive"

# ---- SIGKILL: the next run sweeps what the killed one left, and nothing else
sleep 600 &
live=$!
dead=$(sh -c 'echo $$')
f0=$fails
run_until KILL '^vforge: index build k-means:' "$tmp/k.err" -- "$V" index build "$tmp/c" --output "$tmp/ix/x.ivf" --type sq8 --nlist 100
killed=$(temps "$tmp/ix")
[ -n "$killed" ] || echo "note: the SIGKILLed index build left no spill (it had not written one yet)"
touch "$tmp/ix/x.ivf.spill.$host-$live.0" "$tmp/ix/x.ivf.spill.otherhost-$dead.0" "$tmp/ix/x.ivf.tmp.$host-$dead.7"
"$V" index build "$tmp/c" --output "$tmp/ix/x.ivf" --type sq8 --nlist 100 2> "$tmp/k2.err" > /dev/null || fail "index build after SIGKILL"
for f in $killed "$tmp/ix/x.ivf.tmp.$host-$dead.7"; do [ -e "$f" ] && fail "index build: $f of a dead pid was not swept"; done
[ -e "$tmp/ix/x.ivf.spill.$host-$live.0" ] || fail "index build swept the spill of a live pid"
[ -e "$tmp/ix/x.ivf.spill.otherhost-$dead.0" ] || fail "index build swept another host's spill"
grep -q 'removed [0-9]* temporar' "$tmp/k2.err" || fail "the sweep is not logged"
[ "$fails" -eq "$f0" ] && ok "index build after SIGKILL: the dead run's temporaries swept, a live pid's and another host's kept"

f0=$fails
run_until KILL '^vforge: convert: [0-9]*[1-9][0-9]* rows' "$tmp/k3.err" -- "$V" convert "$IDX" --output "$tmp/conv/out" --rows-per-file 1000
staged=$(find "$tmp/conv" -maxdepth 1 -name 'out.tmp.*')
[ -n "$staged" ] || echo "note: the SIGKILLed convert left no staging directory"
[ -e "$tmp/conv/out" ] && fail "convert: SIGKILL left a corpus under the output name"
mkdir -p "$tmp/conv/out.tmp.$host-$live.0"
"$V" convert "$IDX" --output "$tmp/conv/out" --rows-per-file 5000 2> /dev/null > /dev/null || fail "convert after SIGKILL"
for d in $staged; do [ -e "$d" ] && fail "convert: the staging directory $d of a dead pid was not swept"; done
[ -d "$tmp/conv/out.tmp.$host-$live.0" ] || fail "convert swept a live pid's staging directory"
[ "$(ls "$tmp/conv/out" | wc -l)" -eq 2 ] || fail "convert after SIGKILL: $(ls "$tmp/conv/out" | tr '\n' ' ')"
[ "$fails" -eq "$f0" ] && ok "convert after SIGKILL: the staging directory swept, the output complete"

f0=$fails
sed 's/collection_name: fm/collection_name: k/' "$tmp/cfg.yaml" > "$tmp/k.yaml"
run_until KILL '^vforge: load: [0-9]*[1-9][0-9]* rows' "$tmp/k4.err" -- "$V" load run "$tmp/k.yaml"
col=$tmp/store/k
mkdir -p "$col"
touch "$col/seg-00000000000000000999-x.parquet.tmp.$host-$dead.0" "$col/seg-00000000000000000998-x.parquet.tmp.$host-$live.0" \
  "$col/seg-00000000000000000997-x.parquet.tmp.otherhost-$dead.0" "$col/index-0-image.ivf.spill.$host-$dead.3"
killed=$(temps "$col" | grep -v -e "-$live\\." -e otherhost)
"$V" load run "$tmp/k.yaml" --resume 2> "$tmp/k5.err" > /dev/null || fail "load run --resume after SIGKILL: $(tail -2 "$tmp/k5.err")"
grep -q "collection 'k' holds 10000 points (the load sent 10000)" "$tmp/k5.err" || fail "after SIGKILL + --resume: $(grep holds "$tmp/k5.err")"
for f in $killed; do [ -e "$f" ] && fail "load: $f of a dead pid was not swept"; done
[ -e "$col/seg-00000000000000000998-x.parquet.tmp.$host-$live.0" ] || fail "load swept a live pid's segment temporary"
[ -e "$col/seg-00000000000000000997-x.parquet.tmp.otherhost-$dead.0" ] || fail "load swept another host's temporary"
[ "$fails" -eq "$f0" ] && ok "load after SIGKILL: --resume sweeps the dead writers' temporaries ($(echo $killed | wc -w)), keeps a live pid's and another host's"

[ "$fails" -eq 0 ] || { echo "interrupt: $fails failure(s)"; exit 1; }
echo "ok: interruptions ($landed signals landed mid-run)"
