#!/usr/bin/env bash
# s3:// corpora end to end against the suite's radosgw (real SigV4; tests/services/with-services.sh
# exports VF_S3_ENDPOINT / VF_S3_ACCESS_KEY / VF_S3_SECRET_KEY; skipped when unset):
#   - a unique bucket with the bundled corpus (examples/corpus) uploaded by curl --aws-sigv4;
#   - `vforge inspect` / `vforge cat --with-id` on s3://bucket/corpus give the same rows and the
#     same point ids (bare keys) as the local copy with --id-root, directory and single object;
#   - pagination: VFORGE_S3_MAX_KEYS=1 (one key per ListObjectsV2 page) lists the same files;
#   - wrong secret / unknown key id: exit 1 within seconds naming the cause; a missing object or
#     bucket: exit 2 naming it;
#   - credentials from a profile file, from IMDSv2 and from STS web identity (both served by
#     tests/io/imds_standin.mjs), and the message listing the sources when there are none;
#   - generate-queries / brute-force with an s3:// corpus write s3://bucket/corpus/eval/... (checked
#     by a listing and byte-for-byte rows against the same commands on the local copy);
#   - the secret key never appears in anything vforge printed or wrote.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ -n "${VF_S3_ENDPOINT:-}" ] || { echo "VF_S3_ENDPOINT unset (no radosgw): skipped"; exit 77; }
AK=${VF_S3_ACCESS_KEY:-AKTEST}
SK=${VF_S3_SECRET_KEY:-SKTEST}
command -v curl >/dev/null || { echo "curl not installed: skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/s3-test.XXXXXX" 2>/dev/null || mktemp -d)
bucket="test-s3-$$-$(date +%s)"
standin_pid=
cleanup() {
  [ -n "$standin_pid" ] && { kill "$standin_pid" 2>/dev/null; wait "$standin_pid" 2>/dev/null; }
  for b in "$bucket" "$bucket-pub"; do
    s3curl "$VF_S3_ENDPOINT/$b?list-type=2" 2>/dev/null | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' |
      while IFS= read -r k; do s3curl -X DELETE "$VF_S3_ENDPOINT/$b/$(urlenc "$k")" >/dev/null 2>&1; done
    s3curl -X DELETE "$VF_S3_ENDPOINT/$b" >/dev/null 2>&1
  done
  rm -rf "$tmp"
}
urlenc() { # SigV4 path encoding of a key ('/' kept)
  local s=$1 out= c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9/._~-]) out+=$c ;; *) out+=$(printf '%%%02X' "'$c") ;; esac
  done
  printf '%s' "$out"
}
s3curl() { curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" -u "$AK:$SK" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# every run: no ambient AWS settings, no ~/.aws, no IMDS probing unless a check asks for it
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE \
  AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL_S3 AWS_ENDPOINT_URL_STS AWS_WEB_IDENTITY_TOKEN_FILE \
  AWS_ROLE_ARN AWS_ROLE_SESSION_NAME AWS_NO_SIGN_REQUEST AWS_EC2_METADATA_SERVICE_ENDPOINT \
  AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE VFORGE_S3_MAX_KEYS
export HOME="$tmp/home" TMPDIR="$tmp/tmpdir" AWS_ENDPOINT_URL="$VF_S3_ENDPOINT" AWS_EC2_METADATA_DISABLED=true
mkdir -p "$HOME" "$TMPDIR" "$tmp/out"
n_out=0
# vf NAME ARGS...: run vforge with the test keys; stdout -> out/NAME.out, stderr -> out/NAME.err
vf() {
  local name=$1; shift
  AWS_ACCESS_KEY_ID=$AK AWS_SECRET_ACCESS_KEY=$SK "$V" "$@" >"$tmp/out/$name.out" 2>"$tmp/out/$name.err"
}
# vfe NAME ARGS...: the same without credentials in the environment (callers set what they test)
vfe() {
  local name=$1; shift
  "$V" "$@" >"$tmp/out/$name.out" 2>"$tmp/out/$name.err"
}

code=$(s3curl -o /dev/null -w '%{http_code}' -X PUT "$VF_S3_ENDPOINT/$bucket")
[ "$code" = 200 ] || { echo "FAIL: cannot create bucket $bucket at $VF_S3_ENDPOINT (HTTP $code)"; exit 1; }
corpus="$src/examples/corpus"
mirror="$tmp/mirror"
mkdir -p "$mirror/corpus"
cp -r "$corpus"/. "$mirror/corpus/"
for f in $(cd "$mirror" && find corpus -name '*.parquet' | sort); do
  code=$(s3curl -o /dev/null -w '%{http_code}' -T "$mirror/$f" "$VF_S3_ENDPOINT/$bucket/$f")
  [ "$code" = 200 ] || { echo "FAIL: upload of $f: HTTP $code"; exit 1; }
done
# a key with characters that SigV4 must percent-encode, and a non-parquet neighbour
cp "$mirror/corpus/rank00/batch_00000000.parquet" "$mirror/corpus/rank00/odd name+x=y.parquet"
s3curl -o /dev/null -T "$mirror/corpus/rank00/odd name+x=y.parquet" "$VF_S3_ENDPOINT/$bucket/corpus/rank00/odd%20name%2Bx%3Dy.parquet"
echo "not parquet" > "$tmp/readme.txt"
s3curl -o /dev/null -T "$tmp/readme.txt" "$VF_S3_ENDPOINT/$bucket/corpus/README.txt"

if ! vf probe inspect "s3://$bucket/corpus"; then
  if grep -q "unsupported" "$tmp/out/probe.err"; then echo "vforge refuses s3:// (not built in): skipped"; exit 77; fi
fi

# 1. inspect and cat: same rows and ids as the local copy with --id-root
idx='vf_point_id(filename, file_row_number)'
vf inspect inspect "s3://$bucket/corpus/" || fail "inspect s3://$bucket/corpus/: $(cat "$tmp/out/inspect.err")"
n=$(grep -c "^s3://$bucket/corpus/rank00/.*\.parquet$" "$tmp/out/inspect.out")
[ "$n" = 3 ] && ok "inspect lists the 3 parquet objects" || fail "inspect listed $n parquet objects, want 3"
grep -q README "$tmp/out/inspect.out" && fail "inspect shows the non-parquet README"
vf cat_s3 cat --with-id "$idx" "s3://$bucket/corpus" || fail "cat s3: $(cat "$tmp/out/cat_s3.err")"
vf cat_local cat --with-id "$idx" --id-root "$mirror" "$mirror/corpus" || fail "cat local: $(cat "$tmp/out/cat_local.err")"
rows=$(wc -l < "$tmp/out/cat_s3.out")
if [ "$rows" = 9000 ] && cmp -s "$tmp/out/cat_s3.out" "$tmp/out/cat_local.out"; then
  ok "cat s3://$bucket/corpus = local copy with --id-root ($rows rows, same ids)"
else
  fail "cat s3 ($rows rows) differs from the local copy"
fi
# the bare key of s3://bucket/corpus/rank00/batch_00000000.parquet is corpus/rank00/batch_00000000.parquet
want=$(printf '%s' "corpus/rank00/batch_00000000.parquet:0" | md5sum | cut -c1-32 |
       sed -E 's/(.{8})(.{4})(.{4})(.{4})(.{12})/\1-\2-\3-\4-\5/')
vf cat_one cat --with-id "$idx" --limit 1 "s3://$bucket/corpus/rank00/batch_00000000.parquet" ||
  fail "cat of one object: $(cat "$tmp/out/cat_one.err")"
grep -q "\"__id__\":\"$want\"" "$tmp/out/cat_one.out" && ok "point id of row 0 = md5(bare key:0) = $want" ||
  fail "row 0's id is not $want: $(head -c 80 "$tmp/out/cat_one.out")"
vf cat_odd cat --limit 1 "s3://$bucket/corpus/rank00/odd name+x=y.parquet" &&
  ok "a key with ' ', '+', '=' is read (SigV4 encoding)" || fail "odd key: $(cat "$tmp/out/cat_odd.err")"

# 2. pagination: one key per page
VFORGE_S3_MAX_KEYS=1 vf inspect_p1 inspect "s3://$bucket/corpus/" || fail "paged inspect: $(cat "$tmp/out/inspect_p1.err")"
cmp -s "$tmp/out/inspect.out" "$tmp/out/inspect_p1.out" &&
  ok "VFORGE_S3_MAX_KEYS=1 (one key per ListObjectsV2 page, continuation tokens) lists the same files" || fail "paged listing differs"

# 3. errors
t0=$(date +%s)
AWS_SECRET_ACCESS_KEY=wrong-secret AWS_ACCESS_KEY_ID=$AK "$V" inspect "s3://$bucket/corpus/" >"$tmp/out/badsk.out" 2>"$tmp/out/badsk.err"
rc=$?; t1=$(date +%s)
{ [ $rc = 1 ] && grep -q "SignatureDoesNotMatch" "$tmp/out/badsk.err" && grep -q "AWS_SECRET_ACCESS_KEY" "$tmp/out/badsk.err" &&
  [ $((t1 - t0)) -lt 10 ]; } && ok "wrong secret: exit 1 in $((t1 - t0)) s: $(cat "$tmp/out/badsk.err")" ||
  fail "wrong secret: rc=$rc after $((t1 - t0)) s: $(cat "$tmp/out/badsk.err")"
grep -q "wrong-secret" "$tmp/out/badsk.err" && fail "the wrong secret is echoed"
AWS_SECRET_ACCESS_KEY=$SK AWS_ACCESS_KEY_ID=AKNOTKNOWN "$V" cat "s3://$bucket/corpus/rank00/batch_00000000.parquet" >"$tmp/out/badak.out" 2>"$tmp/out/badak.err"
rc=$?
[ $rc = 1 ] && grep -q "InvalidAccessKeyId" "$tmp/out/badak.err" && ok "unknown key id: exit 1 (InvalidAccessKeyId)" ||
  fail "unknown key id: rc=$rc $(cat "$tmp/out/badak.err")"
vf missing cat "s3://$bucket/corpus/rank00/missing.parquet"; rc=$?
[ $rc = 2 ] && grep -q "s3://$bucket/corpus/rank00/missing.parquet" "$tmp/out/missing.err" &&
  ok "missing object: exit 2 naming it" || fail "missing object: rc=$rc $(cat "$tmp/out/missing.err")"
vf nobucket inspect "s3://$bucket-none/corpus/"; rc=$?
[ $rc = 2 ] && grep -q "NoSuchBucket" "$tmp/out/nobucket.err" && ok "missing bucket: exit 2 (NoSuchBucket)" ||
  fail "missing bucket: rc=$rc $(cat "$tmp/out/nobucket.err")"
vfe nocreds inspect "s3://$bucket/corpus/"; rc=$?
{ [ $rc = 2 ] && grep -q "no AWS credentials found" "$tmp/out/nocreds.err" && grep -q "AWS_EC2_METADATA_DISABLED" "$tmp/out/nocreds.err"; } &&
  ok "no credentials: exit 2 listing the sources tried" || fail "no credentials: rc=$rc $(cat "$tmp/out/nocreds.err")"

# unsigned requests (AWS_NO_SIGN_REQUEST=true): a public-read bucket works, a private one is refused
s3curl -o /dev/null -X PUT -H "x-amz-acl: public-read" "$VF_S3_ENDPOINT/$bucket-pub"
s3curl -o /dev/null -H "x-amz-acl: public-read" -T "$mirror/corpus/rank00/batch_00000000.parquet" \
  "$VF_S3_ENDPOINT/$bucket-pub/pub/a.parquet"
AWS_NO_SIGN_REQUEST=true vfe anon cat --with-id "$idx" "s3://$bucket-pub/pub"
rc=$?
[ $rc = 0 ] && [ "$(wc -l < "$tmp/out/anon.out")" = 3000 ] && ok "AWS_NO_SIGN_REQUEST=true reads a public-read bucket" ||
  fail "anonymous read: rc=$rc $(cat "$tmp/out/anon.err")"
AWS_NO_SIGN_REQUEST=true vfe anon_private inspect "s3://$bucket/corpus"
rc=$?
[ $rc = 1 ] && grep -q "not public" "$tmp/out/anon_private.err" && ok "AWS_NO_SIGN_REQUEST=true on a private bucket: exit 1 (not public)" ||
  fail "anonymous private: rc=$rc $(cat "$tmp/out/anon_private.err")"

# 4. a profile in the shared credentials file (+ region from the config file)
printf '[default]\naws_access_key_id = AKWRONG\naws_secret_access_key = wrong\n[vf]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
  "$AK" "$SK" > "$tmp/credentials"
printf '[profile vf]\nregion = us-east-1\n' > "$tmp/config"
AWS_SHARED_CREDENTIALS_FILE="$tmp/credentials" AWS_CONFIG_FILE="$tmp/config" AWS_PROFILE=vf \
  vfe profile cat --with-id "$idx" "s3://$bucket/corpus" &&
  cmp -s "$tmp/out/profile.out" "$tmp/out/cat_s3.out" && ok "credentials from profile 'vf' of AWS_SHARED_CREDENTIALS_FILE" ||
  fail "profile: $(cat "$tmp/out/profile.err")"
AWS_SHARED_CREDENTIALS_FILE="$tmp/credentials" AWS_PROFILE=nope vfe profile_missing inspect "s3://$bucket/corpus"
rc=$?
[ $rc = 2 ] && grep -q "'nope'" "$tmp/out/profile_missing.err" && ok "unknown AWS_PROFILE: exit 2 naming it" ||
  fail "unknown profile: rc=$rc $(cat "$tmp/out/profile_missing.err")"

# 5. IMDSv2 and web identity through the stand-in
if command -v node >/dev/null; then
  echo "vf-web-identity-token" > "$tmp/wi-token"
  node "$src/tests/io/imds_standin.mjs" "$tmp/port" "$tmp/standin.log" "$AK" "$SK" vf-web-identity-token &
  standin_pid=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/port" 2>/dev/null)
  if [ -z "$port" ]; then
    fail "the IMDS stand-in did not start"
  else
    AWS_EC2_METADATA_DISABLED=false AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$port" \
      vfe imds cat --with-id "$idx" "s3://$bucket/corpus"
    cmp -s "$tmp/out/imds.out" "$tmp/out/cat_s3.out" &&
      grep -q "^PUT /latest/api/token -> 200" "$tmp/standin.log" &&
      grep -q "^GET /latest/meta-data/iam/security-credentials/vf-test-role -> 200" "$tmp/standin.log" &&
      ok "credentials from IMDSv2 (token PUT, role, credentials)" || fail "IMDS: $(cat "$tmp/out/imds.err"; cat "$tmp/standin.log")"
    grep -q "GET .* -> 401" "$tmp/standin.log" && fail "an IMDS GET went without the session token"
    AWS_ENDPOINT_URL_STS="http://127.0.0.1:$port" AWS_WEB_IDENTITY_TOKEN_FILE="$tmp/wi-token" \
      AWS_ROLE_ARN="arn:aws:iam::123456789012:role/vf-test" vfe webid cat --with-id "$idx" "s3://$bucket/corpus"
    cmp -s "$tmp/out/webid.out" "$tmp/out/cat_s3.out" && grep -q "^POST / -> 200" "$tmp/standin.log" &&
      ok "credentials from STS AssumeRoleWithWebIdentity" || fail "web identity: $(cat "$tmp/out/webid.err")"
    echo "not-the-token" > "$tmp/wi-bad"
    AWS_ENDPOINT_URL_STS="http://127.0.0.1:$port" AWS_WEB_IDENTITY_TOKEN_FILE="$tmp/wi-bad" \
      AWS_ROLE_ARN="arn:aws:iam::123456789012:role/vf-test" vfe webid_bad inspect "s3://$bucket/corpus"
    rc=$?
    [ $rc = 1 ] && grep -q "InvalidIdentityToken" "$tmp/out/webid_bad.err" && ok "a refused web identity token: exit 1 (InvalidIdentityToken)" ||
      fail "bad web identity token: rc=$rc $(cat "$tmp/out/webid_bad.err")"
    grep -q "not-the-token\|vf-web-identity-token" "$tmp/out/"*.err && fail "a web identity token was printed"
  fi
else
  echo "note: node not installed: IMDS / web identity checks not run"
fi

# 6. eval outputs land in s3://bucket/corpus/eval/
vf gq generate-queries "s3://$bucket/corpus" -n 10 || fail "generate-queries: $(cat "$tmp/out/gq.err")"
vf gq_local generate-queries "$mirror/corpus" --id-root "$mirror" -n 10 || fail "local generate-queries: $(cat "$tmp/out/gq_local.err")"
s3curl "$VF_S3_ENDPOINT/$bucket?list-type=2&prefix=corpus%2Feval%2F" > "$tmp/out/eval-list.xml"
grep -q "<Key>corpus/eval/queries_10.parquet</Key>" "$tmp/out/eval-list.xml" &&
  ok "generate-queries wrote s3://$bucket/corpus/eval/queries_10.parquet" || fail "no queries_10.parquet in $(cat "$tmp/out/eval-list.xml")"
s3curl -o "$tmp/out/q_s3.parquet" "$VF_S3_ENDPOINT/$bucket/corpus/eval/queries_10.parquet"
"$V" cat "$tmp/out/q_s3.parquet" > "$tmp/out/q_s3.jsonl" 2>&1
"$V" cat "$mirror/corpus/eval/queries_10.parquet" > "$tmp/out/q_local.jsonl" 2>&1
[ "$(wc -l < "$tmp/out/q_s3.jsonl")" = 10 ] && cmp -s "$tmp/out/q_s3.jsonl" "$tmp/out/q_local.jsonl" &&
  ok "the uploaded queries file has the same 10 rows as the local run" || fail "queries differ"
vf bf brute-force "s3://$bucket/corpus" --queries "s3://$bucket/corpus/eval/queries_10.parquet" -k 5 ||
  fail "brute-force: $(cat "$tmp/out/bf.err")"
vf bf_local brute-force "$mirror/corpus" --id-root "$mirror" --queries "$mirror/corpus/eval/queries_10.parquet" -k 5 ||
  fail "local brute-force: $(cat "$tmp/out/bf_local.err")"
s3curl -o "$tmp/out/bf_s3.parquet" "$VF_S3_ENDPOINT/$bucket/corpus/eval/brute_force_queries_10_k5.parquet"
"$V" cat "$tmp/out/bf_s3.parquet" > "$tmp/out/bf_s3.jsonl" 2>&1
"$V" cat "$mirror/corpus/eval/brute_force_queries_10_k5.parquet" > "$tmp/out/bf_local.jsonl" 2>&1
[ "$(wc -l < "$tmp/out/bf_s3.jsonl")" = 10 ] && cmp -s "$tmp/out/bf_s3.jsonl" "$tmp/out/bf_local.jsonl" &&
  ok "brute-force with s3:// queries wrote corpus/eval/brute_force_queries_10_k5.parquet = local run" ||
  fail "brute-force output differs or is missing"
for r in 0 1; do
  vf bf_r$r brute-force "s3://$bucket/corpus" --queries "s3://$bucket/corpus/eval/queries_10.parquet" -k 5 \
    --num-jobs 2 --job-rank $r || fail "brute-force rank $r: $(cat "$tmp/out/bf_r$r.err")"
done
vf bf_merge brute-force-merge "s3://$bucket/corpus" --queries "s3://$bucket/corpus/eval/queries_10.parquet" -k 5 \
  --output "s3://$bucket/merged/bf.parquet" || fail "brute-force-merge: $(cat "$tmp/out/bf_merge.err")"
s3curl -o "$tmp/out/merged.parquet" "$VF_S3_ENDPOINT/$bucket/merged/bf.parquet"
"$V" cat "$tmp/out/merged.parquet" > "$tmp/out/merged.jsonl" 2>&1
s3curl "$VF_S3_ENDPOINT/$bucket?list-type=2&prefix=corpus%2Feval%2F_bf_partial_queries_10_k5%2F" > "$tmp/out/partials.xml"
[ "$(grep -o '<Key>[^<]*rank00[01].parquet</Key>' "$tmp/out/partials.xml" | wc -l)" = 2 ] &&
  cmp -s "$tmp/out/merged.jsonl" "$tmp/out/bf_local.jsonl" &&
  ok "2 brute-force partials in s3://$bucket/corpus/eval/_bf_partial_queries_10_k5/, merged = local run" ||
  fail "partials / merge: $(cat "$tmp/out/partials.xml")"
vf gq_out generate-queries "s3://$bucket/corpus" -n 3 --output "s3://$bucket/elsewhere/q3.parquet" ||
  fail "--output s3://: $(cat "$tmp/out/gq_out.err")"
s3curl -o /dev/null -w '%{http_code}' -I "$VF_S3_ENDPOINT/$bucket/elsewhere/q3.parquet" | grep -q 200 &&
  ok "--output s3://$bucket/elsewhere/q3.parquet" || fail "--output s3:// not written"
left=$(ls "$TMPDIR" | grep -c vforge-out)
[ "$left" = 0 ] && ok "no temporary output files left in TMPDIR" || fail "$left temporary files left in TMPDIR"

# 7. the secret key in nothing vforge printed or wrote
if grep -rl -- "$SK" "$tmp/out" "$TMPDIR" 2>/dev/null; then fail "the secret key appears in the files above"
else ok "the secret key appears in none of $(ls "$tmp/out" | wc -l) outputs/logs"; fi

[ $fails = 0 ] && echo "test_s3: all passed" || echo "test_s3: $fails failed"
[ $fails = 0 ]
