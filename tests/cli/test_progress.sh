#!/usr/bin/env bash
# Issue 14, defect 5: no long stage sits silent, and progress never garbles a terminal.
#   1. every stage reports: index build (read, k-means i/N with the objective, assign %, encode),
#      load run (load, then finalize: k-means, assign ...), brute-force (% and ETA), scan (%) —
#      seen on a pipe with VFORGE_PROGRESS_INTERVAL small enough to print every event;
#   2. on a terminal 40 columns wide (a pty, TIOCSWINSZ and COLUMNS=40) no line ever reaches the
#      last column (so nothing wraps into stale lines), and the final summary starts on its own
#      line (the status line is cleared first) — for index build, brute-force and load run;
#   3. piped output prints a line every VFORGE_PROGRESS_INTERVAL seconds while a stage runs (the
#      README promise, default 10 s), and nothing for a run shorter than the interval.
# Corpus: the first 5000 rows of Fashion-MNIST t10k (Debian dataset-fashion-mnist), 784-d.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "skip: $IDX absent (dataset-fashion-mnist)"; exit 77; }
command -v python3 > /dev/null || { echo "skip: no python3 (pty)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/progress.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$V" convert "$IDX" --output "$tmp/all" --rows-per-file 2500 --row-group-rows 500 2> /dev/null ||
  { echo "FAIL: convert"; exit 1; }
mkdir "$tmp/c" && mv "$tmp/all/batch_00000000.parquet" "$tmp/all/batch_00000001.parquet" "$tmp/c/" # 5000 rows
"$V" generate-queries "$tmp/c" -n 200 2> /dev/null || { echo "FAIL: generate-queries"; exit 1; }
Q=$tmp/c/eval/queries_200.parquet
cat > "$tmp/cfg.yaml" <<EOF
vectors:
  image: {type: dense, column: emb, distance: euclid}
datasource: {uri: $tmp/c}
vectorstore: {type: local, path: $tmp/store, collection_name: fm, params: {recreate: true, index: {nlist: 64, min_rows: 1000}}}
loader: {batch_size: 500, concurrency: 2}
EOF

# ---- 1. the stages, on a pipe, every event printed
every() { VFORGE_PROGRESS_INTERVAL=0.000001 "$@" 2> "$tmp/pipe.err" > /dev/null; }
has() { grep -Eq -- "$1" "$tmp/pipe.err" || { fail "$2: no line matching '$1'"; return 1; }; }
every "$V" index build "$tmp/c" --output "$tmp/x.ivf" --type sq8 --nlist 64 || fail "index build"
has '^vforge: index build read: [0-9]+ rows \([0-9]+%, ETA' "index build read" &&
  has '^vforge: index build k-means: [0-9]+/20 iterations \([0-9]+%.*objective [0-9.e+]+' "index build k-means" &&
  has '^vforge: index build assign: [0-9]+ rows \([0-9]+%' "index build assign" &&
  has '^vforge: index build encode: [0-9]+ rows \([0-9]+%' "index build encode" &&
  ok "index build reports read, k-means iterations with the objective, assign and encode"
every "$V" load run "$tmp/cfg.yaml" || fail "load run"
has '^vforge: load: [0-9]+ rows \([0-9]+%' "load" &&
  has '^vforge: finalize k-means: [0-9]+/10 iterations' "finalize k-means" && # the store's most iterations (issue 17)
  has '^vforge: finalize assign: ' "finalize assign" &&
  ok "load run reports the load, then the finalize stages (index training) instead of sitting at 100%"
every "$V" brute-force "$tmp/c" --queries "$Q" -k 10 --metric euclid || fail "brute-force"
has '^vforge: brute-force: [0-9]+ rows \([0-9]+%, ETA [0-9]' "brute-force" &&
  ok "brute-force reports % and ETA"
every "$V" scan "$tmp/c" || fail "scan"
has '^vforge: scan: [0-9]+ rows \([0-9]+%' "scan" && ok "scan reports %"

# ---- 2. a 40-column terminal
cat > "$tmp/vt.py" <<'PYEOF'
# python3 vt.py COLS OUT -- CMD...: run CMD on a pty of COLS columns, emulate what a terminal
# shows (\r, \n, ESC[K) and write the screen's lines to OUT; exit 3 when a line that is redrawn
# (returned to with \r, as a status line is) reached the last column: on a terminal it would
# have wrapped, and the redraw would leave its first part behind as a stale line.  Complete
# lines (ended by \n: logs, summaries) may wrap like any terminal output.
import os, pty, sys, fcntl, termios, struct, select, re
cols, out_path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.environ['COLUMNS'] = str(cols)
    os.execvp(argv[0], argv)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 24, cols, 0, 0))
data = b''
while True:
    try:
        r, _, _ = select.select([fd], [], [], 300)
        if not r: break
        d = os.read(fd, 65536)
        if not d: break
        data += d
    except OSError:
        break
_, status = os.waitpid(pid, 0)
text = data.decode('utf-8', 'replace')
lines, cur, col, wrapped, i = [], [' '] * cols, 0, 0, 0
while i < len(text):
    c = text[i]
    if c == '\x1b':
        m = re.match(r'\x1b\[[0-9;]*([A-Za-z])', text[i:])
        if m:
            if m.group(1) == 'K':
                for j in range(col, cols): cur[j] = ' '
            i += len(m.group(0)); continue
    if c == '\r':
        if col >= cols and not text.startswith('\n', i + 1): wrapped += 1
        col = 0
    elif c == '\n':
        lines.append(''.join(cur).rstrip()); cur = [' '] * cols; col = 0
    elif c >= ' ':
        if col < cols: cur[col] = c
        col += 1
    i += 1
lines.append(''.join(cur).rstrip())
open(out_path, 'w').write('\n'.join(lines) + '\n')
rc = os.waitstatus_to_exitcode(status)
sys.exit(3 if wrapped else (0 if rc == 0 else 4))
PYEOF
narrow() { # LABEL SUMMARY-REGEX CMD...
  local label=$1 re=$2; shift 2
  python3 "$tmp/vt.py" 40 "$tmp/screen" -- "$@"
  local rc=$?
  if [ "$rc" -eq 3 ]; then fail "$label: a line reached the 40th column (it would wrap)"; return; fi
  if [ "$rc" -ne 0 ]; then fail "$label: exit $rc on the pty"; return; fi
  grep -Eq "$re" "$tmp/screen" || { fail "$label: the summary does not start its own line: $(grep -E "${re#^}" "$tmp/screen" | head -2)"; return; }
  ok "$label: at 40 columns nothing wraps and the summary starts its own line"
}
narrow "index build" '^index build: 5000 rows x 784' "$V" index build "$tmp/c" --output "$tmp/y.ivf" --type sq8 --nlist 64
narrow "brute-force" '^brute-force: 200 queries x 5000 rows' "$V" brute-force "$tmp/c" --queries "$Q" -k 10 --metric euclid --output "$tmp/bf.parquet"
narrow "load run" '^load run: 5000 points' "$V" load run "$tmp/cfg.yaml"

# ---- 3. periodic lines on a pipe
VFORGE_PROGRESS_INTERVAL=0.3 "$V" index build "$tmp/c" --output "$tmp/z.ivf" --type sq8 --nlist 64 2> "$tmp/p.err" > /dev/null ||
  fail "index build (interval 0.3)"
n=$(grep -c '^vforge: index build ' "$tmp/p.err")
secs=$(sed -n 's/^  time: \([0-9.]*\) s.*/\1/p' "$tmp/p.err")
# a run of S seconds prints about S/0.3 lines; at least two for any run over a second
if awk -v s="${secs:-0}" 'BEGIN { exit !(s > 1.0) }'; then
  [ "$n" -ge 2 ] && ok "piped: $n progress lines in a ${secs} s run at VFORGE_PROGRESS_INTERVAL=0.3" ||
    fail "piped: $n progress lines in a ${secs} s run at VFORGE_PROGRESS_INTERVAL=0.3"
else
  echo "skip (3): the build took only ${secs} s"
fi
"$V" scan "$tmp/c" 2> "$tmp/q.err" > /dev/null
grep -q '^vforge: scan: ' "$tmp/q.err" && fail "piped: a progress line in a run shorter than the default 10 s"
grep -q '^scan: 5000 rows' "$tmp/q.err" && ok "piped: a short run prints only its summary"

[ "$fails" -eq 0 ] || { echo "progress: $fails failure(s)"; exit 1; }
echo "ok: progress"
