#!/usr/bin/env bash
# hf:// against the nginx HF stand-in (VF_HF_ENDPOINT, tests/services/hf) and a fault-injecting
# stand-in started here (tests/services/hf/faults.js): listing with Link pagination (and a next
# link to another origin refused), the 302 "CDN" redirect with Range kept and the token not sent
# to the CDN host, https with VF_HF_CA (and failing without it), HF_TOKEN sent and never printed,
# 429 then success (retry logged), 503 forever (clear error within the retry budget), a missing
# file (exit 2 naming it), a server that ignores Range (clear error, no whole-file download), a
# reset connection and a cut body (retried), eval/ excluded from the corpus.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "HF stand-in not running (VF_HF_ENDPOINT unset): skipped"; exit 77; }
command -v node >/dev/null || { echo "node not installed: skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/hf-test.XXXXXX" 2>/dev/null || mktemp -d)
repo="test-hf-$$"
fpid=
cleanup() {
  [ -n "$fpid" ] && { kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null; }
  rm -rf "$tmp" "$VF_HF_ROOT/repos/vftest/$repo" "$VF_HF_ROOT/api/vftest/$repo"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
unset HF_TOKEN VFORGE_CA_BUNDLE
export VFORGE_REMOTE_RETRIES=3

# the repo: the example corpus, an eval/ file and a non-parquet file
mkdir -p "$tmp/repo"
cp -r "$src/examples/corpus/rank00" "$tmp/repo/"
mkdir -p "$tmp/repo/eval" && cp "$src/examples/corpus/rank00/batch_00000000.parquet" "$tmp/repo/eval/queries_1.parquet"
echo "readme" > "$tmp/repo/README.md"
bash "$src/tests/services/hf/publish.sh" "$tmp/repo" vftest "$repo" || { echo "publish failed"; exit 1; }
U="hf://datasets/vftest/$repo"
ID='vf_point_id(filename, file_row_number)'
"$V" cat --with-id "$ID" --id-root "$tmp/repo" "$tmp/repo/rank00" > "$tmp/local.jsonl" 2>/dev/null || fail "local cat"
[ -s "$tmp/local.jsonl" ] || fail "local cat is empty"

# --- nginx stand-in: plain listing, eval/ excluded, identical rows and ids
HF_ENDPOINT=$VF_HF_ENDPOINT "$V" cat --with-id "$ID" "$U" > "$tmp/hf.jsonl" 2> "$tmp/err" || fail "hf cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/hf.jsonl" && ok "hf:// cat --with-id identical to local (id_root)" || fail "hf:// cat differs from local"
HF_ENDPOINT=$VF_HF_ENDPOINT "$V" inspect --json "$U" > "$tmp/insp.json" 2>/dev/null
python3 - "$tmp/insp.json" <<'EOF' && ok "eval/ and README excluded, keys sorted" || fail "listing filter"
import json, sys
d = json.load(open(sys.argv[1]))
keys = [f["key"] for f in d["files"]]
assert keys == ["rank00/batch_00000000.parquet", "rank00/batch_00000001.parquet"], keys
assert d["prefix"].startswith("hf://datasets/vftest/"), d["prefix"]
EOF

# --- a revision (the stand-in serves one revision whatever is asked; the keys must not change;
# revisions with '/' are sent as one %2F-encoded segment: tests/io/test_remote.c)
HF_ENDPOINT=$VF_HF_ENDPOINT "$V" cat --with-id "$ID" "hf://datasets/vftest/$repo@v1.0" > "$tmp/rev.jsonl" 2> "$tmp/err" || fail "@rev cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/rev.jsonl" && grep -q "/$repo/tree/v1.0?recursive=true" "$VF_HF_ROOT/logs/access.log" \
  && grep -q "/$repo/resolve/v1.0/rank00/" "$VF_HF_ROOT/logs/access.log" && ok "@v1.0: tree and resolve URLs carry the revision, same keys" || fail "@rev"

# --- https: verification on
HF_ENDPOINT=$VF_HF_ENDPOINT_TLS "$V" inspect "$U" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -qi "certificate" "$tmp/err" && ok "https without the CA bundle fails (TLS verified): $(tail -1 "$tmp/err" | cut -c1-120)" || fail "https without CA: rc=$rc $(cat "$tmp/err")"
VFORGE_CA_BUNDLE=$VF_HF_CA HF_ENDPOINT=$VF_HF_ENDPOINT_TLS "$V" cat --with-id "$ID" "$U" > "$tmp/tls.jsonl" 2> "$tmp/err" || fail "https with CA: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/tls.jsonl" && ok "https with VFORGE_CA_BUNDLE=VF_HF_CA identical" || fail "https output differs"

# --- nginx 302 to the CDN host (another port), Range kept: a single-file URI
F="$U/rank00/batch_00000001.parquet"
"$V" cat --with-id "$ID" --id-root "$tmp/repo" "$tmp/repo/rank00/batch_00000001.parquet" > "$tmp/local1.jsonl" 2>/dev/null
HF_ENDPOINT=$VF_HF_ENDPOINT/redir "$V" cat --with-id "$ID" "$F" > "$tmp/redir.jsonl" 2> "$tmp/err" || fail "redirect cat: $(cat "$tmp/err")"
cmp -s "$tmp/local1.jsonl" "$tmp/redir.jsonl" && ok "302 redirect to the CDN followed (single-file URI)" || fail "redirect output differs"

# --- missing file: exit 2 naming it
HF_ENDPOINT=$VF_HF_ENDPOINT "$V" inspect "$U/rank00/nope.parquet" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nope.parquet" "$tmp/err" && ok "missing file: exit 2: $(cut -c1-150 "$tmp/err")" || fail "missing file: rc=$rc $(cat "$tmp/err")"
HF_ENDPOINT=$VF_HF_ENDPOINT "$V" inspect "hf://datasets/vftest/no-such-repo-$$" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no-such-repo" "$tmp/err" && ok "missing repo: exit 2" || fail "missing repo: rc=$rc $(cat "$tmp/err")"

# --- the fault-injecting stand-in
export FAULT_TOKEN="hf_test_$$_SECRET"
node "$src/tests/services/hf/faults.js" "$VF_HF_ROOT" "$tmp/faults.log" > "$tmp/faults.out" 2>&1 &
fpid=$!
for _ in $(seq 50); do grep -q PORT "$tmp/faults.out" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/{print $2}' "$tmp/faults.out")
[ -n "$port" ] || { echo "faults.js did not start: $(cat "$tmp/faults.out")"; exit 1; }
E="http://127.0.0.1:$port/m"
# mode: count the log lines of a mode matching a python predicate
logcount() { python3 -c "
import json,sys
n=0
for l in open('$tmp/faults.log'):
  d=json.loads(l)
  if d['mode']=='$1' and ($2): n+=1
print(n)"; }

# pagination (2 entries per page) with Link rel="next"
HF_ENDPOINT=$E/ok "$V" cat --with-id "$ID" "$U" > "$tmp/paged.jsonl" 2> "$tmp/err" || fail "paged cat: $(cat "$tmp/err")"
pages=$(logcount ok "'/tree/' in d['path']")
cmp -s "$tmp/local.jsonl" "$tmp/paged.jsonl" && [ "$pages" -ge 3 ] && ok "tree listing over $pages Link-paginated pages, identical rows" || fail "pagination: pages=$pages"
HF_ENDPOINT=$E/badnext "$V" inspect "$U" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "leaves the endpoint" "$tmp/err" && ok "next link to another origin refused" || fail "badnext: rc=$rc $(cat "$tmp/err")"

# token: sent as Bearer, never printed; the redirect to another host does not carry it
HF_TOKEN=$FAULT_TOKEN HF_ENDPOINT=$E/token "$V" cat --with-id "$ID" "$U" > "$tmp/tok.jsonl" 2> "$tmp/err" || fail "token cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/tok.jsonl" && ok "HF_TOKEN accepted by a location that requires it" || fail "token output differs"
HF_TOKEN=wrong-$FAULT_TOKEN HF_ENDPOINT=$E/token "$V" inspect "$U" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "401" "$tmp/err" && ok "wrong token: HTTP 401 reported" || fail "wrong token: rc=$rc $(cat "$tmp/err")"
grep -q "$FAULT_TOKEN" "$tmp/err" "$tmp/out" && fail "the token appears in the output" || ok "the token never appears in stdout/stderr"
HF_TOKEN=$FAULT_TOKEN HF_ENDPOINT=$E/redir "$V" cat --with-id "$ID" "$U" > "$tmp/rd.jsonl" 2> "$tmp/err" || fail "redir cat: $(cat "$tmp/err")"
cdn_auth=$(logcount ok "d['path'].startswith('/cdn/') and d['auth']")
cdn_range=$(logcount ok "d['path'].startswith('/cdn/') and d['range'] is not None")
hub_auth=$(logcount redir "'/resolve/' in d['path'] and d['auth']")
cmp -s "$tmp/local.jsonl" "$tmp/rd.jsonl" && [ "$cdn_auth" -eq 0 ] && [ "$cdn_range" -ge 2 ] && [ "$hub_auth" -ge 1 ] \
  && ok "redirect: Range kept on $cdn_range CDN requests, Authorization sent to the Hub ($hub_auth) and never to the CDN" \
  || fail "redirect: cdn_auth=$cdn_auth cdn_range=$cdn_range hub_auth=$hub_auth"

# 429 then success, the retry logged
HF_ENDPOINT=$E/r429 "$V" cat --with-id "$ID" "$U" > "$tmp/429.jsonl" 2> "$tmp/err" || fail "429 cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/429.jsonl" && grep -q "HTTP 429.*retrying in 1.00 s" "$tmp/err" && ok "429 + Retry-After: retried (logged), identical rows" || fail "429: $(head -3 "$tmp/err")"

# 503 forever: a clear error within the retry budget (VFORGE_REMOTE_RETRIES=3)
t0=$(date +%s)
HF_ENDPOINT=$E/s503 "$V" inspect "$U" > /dev/null 2> "$tmp/err"; rc=$?
t1=$(date +%s)
[ $rc -eq 1 ] && grep -q "HTTP 503 after 4 attempts" "$tmp/err" && [ $((t1 - t0)) -le 20 ] && ok "503 forever: exit 1 after 4 attempts in $((t1 - t0)) s" || fail "503: rc=$rc $(tail -1 "$tmp/err")"

# a server that ignores Range: clear error, and the file is not downloaded
HF_ENDPOINT=$E/ignorerange "$V" inspect "$U" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "ignored the Range header" "$tmp/err" && ok "Range ignored: exit 2: $(tail -1 "$tmp/err" | cut -c1-160)" || fail "ignorerange: rc=$rc $(cat "$tmp/err")"

# reset connections and cut bodies are retried
HF_ENDPOINT=$E/reset1 "$V" cat --with-id "$ID" "$U" > "$tmp/reset.jsonl" 2> "$tmp/err" || fail "reset cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/reset.jsonl" && grep -q "retrying" "$tmp/err" && ok "connection reset: retried, identical rows" || fail "reset: $(head -3 "$tmp/err")"
HF_ENDPOINT=$E/short1 "$V" cat --with-id "$ID" "$U" > "$tmp/short.jsonl" 2> "$tmp/err" || fail "short cat: $(cat "$tmp/err")"
cmp -s "$tmp/local.jsonl" "$tmp/short.jsonl" && grep -q "retrying" "$tmp/err" && ok "body cut mid-transfer: retried, identical rows" || fail "short: $(head -3 "$tmp/err")"

[ $fails -eq 0 ] && echo "all hf checks passed" || echo "$fails hf check(s) failed"
[ $fails -eq 0 ]
