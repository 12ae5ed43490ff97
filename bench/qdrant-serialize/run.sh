#!/usr/bin/env bash
# bench/qdrant-serialize: Qdrant upserts, REST (JSON) and gRPC (protobuf) side by side.
#   1. serialisation, one thread: points/s per core (thread CPU time) and bytes on the wire per
#      768-d point for each transport, with the ratios (bench.c).  Targets (issue 18): gRPC
#      >= 220k points/s per core, REST >= 72k.
#   2. an end-to-end upload of the same generated 768-d corpus into the Qdrant stand-in on
#      loopback (tests/services/qdrant-standin, REST and gRPC from one process) with
#      `vforge load run --json`, once per transport: points/s and the stand-in's largest
#      message.  The stand-in (node, validating every request) is the bottleneck here, not
#      vforge: the figures show the transports work end to end, not Qdrant's speed.
#      Skipped without node / the npm oracles / ../shared; E2E=0 skips it, E2E_POINTS sets its
#      size (default 10000).
# Builds bench.c with cc against the build's libvforge.a (default build/; pass another build
# directory as $1).  Usage: bench/qdrant-serialize/run.sh [build-dir] [points] [dim] [batch] [seconds]
# Output: one JSON object per part on stdout, also in bench/out/qdrant-serialize/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-$root/build}")
lib="$build/libvforge.a"
[ -f "$lib" ] || { echo "no $lib: build first (cmake -S . -B build && cmake --build build)" >&2; exit 2; }
out="$root/bench/out/qdrant-serialize"
mkdir -p "$out"
cc -std=c17 -O2 -D_GNU_SOURCE -I"$root/include" -I"$root/src" "$here/bench.c" "$lib" \
  $(pkg-config --libs libcurl libzstd liblz4 zlib libbrotlidec libbrotlienc yaml-0.1) \
  -lsnappy -lpthread -lm -ldl -o "$out/qdrant-serialize"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$out/qdrant-serialize" "${2:-100000}" "${3:-768}" "${4:-1000}" "${5:-3}" | tee "$out/result.json"

[ "${E2E:-1}" = 1 ] || exit 0
V="$build/vforge"
oracle="$root/tests/oracle"
shared=${VF_SHARED:-$root/../shared}
sd="$root/tests/services/qdrant-standin"
if ! command -v node > /dev/null || [ ! -d "$oracle/node_modules/@grpc/grpc-js" ] || [ ! -f "$shared/qdrant/openapi.json" ] || [ ! -x "$V" ]; then
  echo "end-to-end upload skipped: needs node, $oracle/node_modules (npm ci), $shared/qdrant and $V" >&2
  exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
n=${E2E_POINTS:-10000}
d=${3:-768}
node -e "const n = +process.argv[2], d = +process.argv[3], b = Buffer.alloc(8 + n * d * 4);
  b.writeUInt32LE(n, 0); b.writeUInt32LE(d, 4);
  let x = 7; for (let i = 0; i < n * d; i++) { x = (x * 1103515245 + 12345) % 2147483648; b.writeFloatLE((x / 2147483648 - 0.5) * 0.2, 8 + 4 * i); }
  require('fs').writeFileSync(process.argv[1], b)" "$tmp/c.fbin" "$n" "$d"
"$V" --quiet convert "$tmp/c.fbin" --output "$tmp/corpus" --row-group-rows 1000 > /dev/null
node "$sd/server.mjs" --port 0 --port-file "$tmp/port" --grpc-port 0 --grpc-port-file "$tmp/gport" \
  --openapi "$shared/qdrant/openapi.json" --oracle "$oracle" --proto "$shared/qdrant/proto" \
  --optimize-ms 0 --max-body-mb 64 > "$tmp/standin.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/port" ] && [ -s "$tmp/gport" ] && break; sleep 0.1; done
[ -s "$tmp/gport" ] || { echo "the stand-in did not start: $(cat "$tmp/standin.out")" >&2; exit 1; }
res="{\"points\":$n,\"dim\":$d"
for tr in rest grpc; do
  cat > "$tmp/$tr.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $tmp/corpus, payload_fields: {id: id}}
vectorstore: {type: qdrant, url: "http://127.0.0.1:$(cat "$tmp/port")", prefer_grpc: $([ $tr = grpc ] && echo true || echo false), grpc_port: $(cat "$tmp/gport"), collection_name: bench_$tr}
loader: {batch_size: 1000, prefetch_size: 4000, concurrency: 2}
EOC
  curl -sf -X POST "http://127.0.0.1:$(cat "$tmp/port")/__standin/stats/reset" > /dev/null
  (cd "$tmp" && "$V" --quiet load run "$tmp/$tr.yaml" --state-dir "$tmp/state-$tr" --json) > "$tmp/$tr.json"
  curl -sf "http://127.0.0.1:$(cat "$tmp/port")/__standin/stats" > "$tmp/$tr.stats"
  res+=$(node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1])), s = JSON.parse(require('fs').readFileSync(process.argv[2]));
    process.stdout.write(',\"' + process.argv[3] + '\":' + JSON.stringify({points_per_s: Math.round(r.points_per_s), seconds: +r.seconds.toFixed(2),
      requests: s.requests, rest_requests: s.rest_requests, grpc_requests: s.grpc_requests, largest_message_bytes: s.max_body_bytes}))" \
    "$tmp/$tr.json" "$tmp/$tr.stats" "$tr")
done
res+=$(node -e "const a = JSON.parse(require('fs').readFileSync(process.argv[1])), b = JSON.parse(require('fs').readFileSync(process.argv[2]));
  process.stdout.write(',\"grpc_over_rest_points_per_s\":' + (b.points_per_s / a.points_per_s).toFixed(2))" "$tmp/rest.json" "$tmp/grpc.json")
res+=",\"note\":\"into the node stand-in on loopback (the bottleneck), not a live Qdrant\"}"
echo "$res" | tee "$out/e2e.json"
