#!/bin/bash
# Publish a local folder as the HF stand-in repo <ns>/<repo>: bash publish.sh SRC_DIR NS REPO
# (copies SRC_DIR to $VF_HF_ROOT/repos/NS/REPO and writes its tree-API listings).
set -euo pipefail
src=$1 ns=$2 repo=$3
: "${VF_HF_ROOT:?the HF stand-in is not running (tests/services/with-services.sh)}"
rm -rf "$VF_HF_ROOT/repos/$ns/$repo" "$VF_HF_ROOT/api/$ns/$repo"
mkdir -p "$VF_HF_ROOT/repos/$ns"
cp -r "$src" "$VF_HF_ROOT/repos/$ns/$repo"
node "$(dirname "$0")/tree-json.js" "$VF_HF_ROOT/repos/$ns/$repo" "$VF_HF_ROOT/api/$ns/$repo/tree/main"
