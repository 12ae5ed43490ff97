#!/usr/bin/env bash
# The committed protobuf tables (src/store/qdrant_pb_schema.{h,c}) are what
# scripts/gen-qdrant-pb.mjs generates from the official protos in ../shared/qdrant/proto: a
# changed proto (or generator) without regenerating fails here.  Skips (77) without node,
# protobufjs (tests/oracle/node_modules, via @grpc/proto-loader) or the shared protos.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
shared=${VF_SHARED:-$src/../shared}
command -v node > /dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$src/tests/oracle/node_modules/protobufjs" ] || { echo "SKIP: no protobufjs in tests/oracle/node_modules"; exit 77; }
[ -f "$shared/qdrant/proto/points_service.proto" ] || { echo "SKIP: no $shared/qdrant/proto"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/qpb-schema.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node "$src/scripts/gen-qdrant-pb.mjs" "$shared/qdrant/proto" "$tmp" > /dev/null || { echo "FAIL: the generator failed"; exit 1; }
rc=0
for f in qdrant_pb_schema.h qdrant_pb_schema.c; do
  if ! diff -q "$src/src/store/$f" "$tmp/$f" > /dev/null; then
    echo "FAIL: src/store/$f differs from what scripts/gen-qdrant-pb.mjs generates (regenerate it):"
    diff "$src/src/store/$f" "$tmp/$f" | head -20
    rc=1
  fi
done
[ $rc -eq 0 ] && echo "ok: the protobuf tables match the protos ($(grep -c '^    {"' "$tmp/qdrant_pb_schema.c") rows)"
exit $rc
