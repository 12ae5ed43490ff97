#!/bin/bash
# HuggingFace stand-in: nginx (nginx-light) serving HF_ROOT/repos/<ns>/<repo>/<path> under the Hub's
# routes (resolve with Range, a 302 "CDN" redirect, the tree API as static JSON written by
# tree-json.js, 429/503 fault endpoints) on 127.0.0.1:8080 (http), 8443 (https, self-signed cert
# in HF_ROOT/conf/cert.pem) and 8081 (the "CDN").  Sourced by tests/services/with-services.sh:
# `source up.sh DIR`; nginx runs in the foreground as a child of the caller (pid appended to
# DIR/hf.pids).  Tests publish a repo with tests/services/hf/publish.sh.  Returns 1 on failure.
HF_ROOT=${1:-/tmp/vforge-hf}
rm -rf "$HF_ROOT"; mkdir -p "$HF_ROOT"/{logs,tmp,conf,repos,api}
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
  -keyout "$HF_ROOT/conf/key.pem" -out "$HF_ROOT/conf/cert.pem" >/dev/null 2>&1 || return 1
sed "s#HF_ROOT#$HF_ROOT#g" "$(dirname "${BASH_SOURCE[0]}")/nginx.conf.in" > "$HF_ROOT/conf/nginx.conf"
nginx -c "$HF_ROOT/conf/nginx.conf" -p "$HF_ROOT" -g 'daemon off;' >"$HF_ROOT/logs/nginx.out" 2>&1 &
echo $! >>"$HF_ROOT/hf.pids"
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:8080/" && break; sleep 0.1; done
curl -s -o /dev/null "http://127.0.0.1:8080/" || { echo "nginx did not come up" >&2; cat "$HF_ROOT/logs/"* >&2; return 1; }
echo "services: nginx HF stand-in up on 127.0.0.1:8080/8443/8081 (root $HF_ROOT)" >&2
