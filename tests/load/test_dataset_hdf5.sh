#!/usr/bin/env bash
# An ann-benchmarks HDF5 bundle as a dataset (issue 8): Fashion-MNIST (Debian
# dataset-fashion-mnist) converted to an ann-benchmarks-style bundle (train: the first 3000
# training images, test: 100 test images, neighbors/distances: exact euclidean top-10 computed
# here with numpy, root attribute distance=euclidean) with h5py; `vforge load` reads `train`
# through a `type: dataset` config, and `vforge bench` takes the bundle itself as queries
# (`test`) and ground truth (`neighbors`, row r = point id r) and must report recall ~1.0 on
# the exact local store.  Also: the bundle read through `vforge convert` (hdf5 input), a
# missing dataset named with the file's datasets, and .fbin queries with a big-ann ground truth.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
FM=${VF_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
[ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "Fashion-MNIST not installed ($FM; Debian dataset-fashion-mnist)"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy, h5py' 2>/dev/null || { echo "python3-h5py / python3-numpy not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/dataset-hdf5.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$PY" - "$FM" "$tmp" <<'EOF' || { echo "FAIL: building the bundle"; exit 1; }
import gzip, sys
import h5py, numpy as np
fm, out = sys.argv[1], sys.argv[2]
def idx(path, n):
    with gzip.open(path, "rb") as f:
        b = f.read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    a = np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)
    return a[:n].reshape(n, -1).astype(np.float32)
train = idx(f"{fm}/train-images-idx3-ubyte.gz", 3000)
test = idx(f"{fm}/t10k-images-idx3-ubyte.gz", 100)
q64, t64 = test.astype(np.float64), train.astype(np.float64)
# integer pixels: every term below is an exact integer in float64, so d2 is exact
d2 = (q64 ** 2).sum(1)[:, None] + (t64 ** 2).sum(1)[None, :] - 2 * q64 @ t64.T
nb = np.argsort(d2, axis=1, kind="stable")[:, :10]
dist = np.sqrt(np.take_along_axis(d2, nb, axis=1))
with h5py.File(f"{out}/fashion-mnist-784-euclidean.hdf5", "w") as f:
    f.attrs["distance"] = "euclidean"
    f.attrs["type"] = "dense"
    f.create_dataset("train", data=train)
    f.create_dataset("test", data=test)
    f.create_dataset("neighbors", data=nb.astype(np.int32))
    f.create_dataset("distances", data=dist.astype(np.float32))
# the same queries as .fbin and the truth as a big-ann ground-truth file
with open(f"{out}/queries.fbin", "wb") as f:
    np.array([100, 784], dtype="<u4").tofile(f)
    test.astype("<f4").tofile(f)
with open(f"{out}/gt.bin", "wb") as f:
    np.array([100, 10], dtype="<u4").tofile(f)
    nb.astype("<i4").tofile(f)
    dist.astype("<f4").tofile(f)
EOF
H="$tmp/fashion-mnist-784-euclidean.hdf5"

cat > "$tmp/fm.yaml" <<EOC
vectors:
  img: {type: dense, distance: euclid}
datasource:
  type: dataset
  vectors: {format: hdf5, path: "$H"}
  id_expression: row
vectorstore: {type: local, path: $tmp/store, collection_name: fmnist}
loader: {batch_size: 500}
EOC
if "$V" --quiet load run "$tmp/fm.yaml" > "$tmp/load.out" 2>&1; then
  n=$("$V" cat "$tmp/store/fmnist" | wc -l)
  [ "$n" -eq 3000 ] && ok "hdf5 bundle loaded: $n points from 'train'" || fail "loaded $n points, expected 3000"
else fail "load hdf5: $(tail -3 "$tmp/load.out")"; fi
# the first point's vector is train row 0 (id 0)
"$V" cat "$tmp/store/fmnist" | "$PY" -c "
import json, sys, h5py, numpy as np
t = h5py.File('$H', 'r')['train']
for line in sys.stdin:
    r = json.loads(line)
    if r['id_num'] in (0, 1234, 2999):
        assert np.array_equal(np.array(r['img'], dtype=np.float32), t[r['id_num']]), r['id_num']
" && ok "points 0, 1234, 2999 hold train rows 0, 1234, 2999" || fail "stored vectors differ from train rows"

if "$V" bench "$tmp/fm.yaml" --queries "$H" --ground-truth "$H" -k 10 --json > "$tmp/bench.json" 2> "$tmp/bench.err"; then
  rec=$("$PY" -c "import json; r = json.load(open('$tmp/bench.json')); print(r['recall'], r['queries'])")
  set -- $rec
  if "$PY" -c "import sys; sys.exit(0 if float('$1') >= 0.99 and int('$2') == 100 else 1)"; then
    ok "bench on the bundle's test/neighbors: recall@10 $1 over $2 queries"
  else fail "bench recall $1 over $2 queries (expected >= 0.99 over 100)"; fi
else fail "bench: $(tail -3 "$tmp/bench.err")"; fi

if "$V" bench "$tmp/fm.yaml" --queries "$tmp/queries.fbin" --ground-truth "$tmp/gt.bin" -k 10 --json > "$tmp/bench2.json" 2> "$tmp/bench2.err"; then
  r2=$("$PY" -c "import json; print(json.load(open('$tmp/bench2.json'))['recall'])")
  "$PY" -c "import sys; sys.exit(0 if float('$r2') >= 0.99 else 1)" &&
    ok "bench with .fbin queries and a big-ann ground truth: recall@10 $r2" || fail "fbin/big-ann recall $r2"
else fail "bench fbin/big-ann: $(tail -3 "$tmp/bench2.err")"; fi

# without `distance:` the bundle's distance attribute (euclidean) is the vector's distance
sed -e 's/{type: dense, distance: euclid}/{type: dense}/' -e "s|$tmp/store|$tmp/store-attr|" "$tmp/fm.yaml" > "$tmp/fm-attr.yaml"
if "$V" --quiet load run "$tmp/fm-attr.yaml" -n 500 > "$tmp/attr.out" 2>&1 &&
   grep -q '"euclid"' "$tmp/store-attr/fmnist/collection.json"; then
  ok "distance taken from the bundle's attribute when the config has none"
else fail "bundle distance not used: $(tail -2 "$tmp/attr.out"; cat "$tmp/store-attr/fmnist/collection.json" 2>/dev/null)"; fi

# convert reads the bundle's train
if "$V" --quiet convert "$H" --output "$tmp/conv" > /dev/null 2> "$tmp/conv.err" &&
   [ "$("$V" cat "$tmp/conv" --columns id | wc -l)" -eq 3000 ]; then
  ok "vforge convert reads an HDF5 bundle's train (3000 rows)"
else fail "convert hdf5: $(tail -2 "$tmp/conv.err")"; fi

# a dataset that is not in the file
cat > "$tmp/bad.yaml" <<EOC
vectors:
  img: {type: dense, column: base}
datasource:
  type: dataset
  vectors: {format: hdf5, path: "$H"}
vectorstore: {type: local, path: $tmp/store2, collection_name: x}
EOC
"$V" --quiet load run "$tmp/bad.yaml" > "$tmp/bad.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "no dataset 'base' (the file has: distances, neighbors, test, train)" "$tmp/bad.out"; then
  ok "a missing HDF5 dataset is named with the file's datasets (exit $rc)"
else fail "missing dataset: exit $rc, $(tail -2 "$tmp/bad.out")"; fi

[ $fails -eq 0 ] && echo "all dataset HDF5 checks passed" || echo "$fails dataset HDF5 checks FAILED"
exit $((fails > 0))
