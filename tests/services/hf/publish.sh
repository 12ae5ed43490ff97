#!/bin/bash
# Publish a local folder as the HF stand-in dataset repo (or bucket) <ns>/<repo>:
#   bash publish.sh SRC_DIR NS REPO [datasets|buckets]
# datasets (default): copies SRC_DIR to $VF_HF_ROOT/repos/NS/REPO, tree listings in api/NS/REPO;
# buckets: copies to $VF_HF_ROOT/bucketfiles/NS/REPO, tree listings in bucketapi/NS/REPO.
set -euo pipefail
src=$1 ns=$2 repo=$3 kind=${4:-datasets}
: "${VF_HF_ROOT:?the HF stand-in is not running (tests/services/with-services.sh)}"
case $kind in
  datasets) files=repos api=api ;;
  buckets) files=bucketfiles api=bucketapi ;;
  *) echo "publish.sh: kind must be datasets or buckets" >&2; exit 2 ;;
esac
rm -rf "$VF_HF_ROOT/$files/$ns/$repo" "$VF_HF_ROOT/$api/$ns/$repo"
mkdir -p "$VF_HF_ROOT/$files/$ns"
cp -r "$src" "$VF_HF_ROOT/$files/$ns/$repo"
if [ "$kind" = datasets ]; then
  node "$(dirname "$0")/tree-json.js" "$VF_HF_ROOT/$files/$ns/$repo" "$VF_HF_ROOT/$api/$ns/$repo/tree/main"
else
  node "$(dirname "$0")/tree-json.js" "$VF_HF_ROOT/$files/$ns/$repo" "$VF_HF_ROOT/$api/$ns/$repo/tree"
fi
