# Fixtures for the README blocks (tests/docs/readme_test.py sources this file in every block's
# script; a block's `<!-- readme-test: setup: readme_fixture NAME ARGS -->` calls one).  Blocks run
# in $README_REPO (a scratch copy of the repository); $README_STATE is the runner's own directory;
# readme_cleanup (run once at the end) removes what the fixtures made in the services.
#
#   readme_fixture demo                  build/demo/fashion-mnist: what `make demo` converts (here the
#                                        10,000 Fashion-MNIST test images, 2 files) — the runner makes it
#   readme_fixture s3-corpus BUCKET PFX  examples/corpus uploaded to s3://BUCKET/PFX/ (radosgw)
#   readme_fixture hf-repo NS REPO DIR   DIR published as the HF stand-in dataset repo NS/REPO
#   readme_fixture hf-corpus NS REPO P   examples/corpus published as P/ of the HF stand-in dataset
#                                        repo NS/REPO (hf://datasets/NS/REPO/P/)
#   readme_fixture http-parts NS REPO    examples/corpus's files as data/part-0.parquet, part-1.parquet
#                                        of the HF stand-in repo NS/REPO (plain HTTP, HEAD + Range)
#   readme_fixture laion NS REPO COUNT   COUNT component-dataset parts in the HF stand-in repo NS/REPO:
#                                        laion/img_emb_{i}.npy (3 rows, 8-d float32) and
#                                        laion/metadata_{i}.parquet (caption, similarity, exif)
#   readme_fixture npy FILE ROWS DIM     a float32 .npy of ROWS random DIM-d rows
#   readme_fixture ann-hdf5 FILE CFG     an ann-benchmarks bundle of Fashion-MNIST (train: 3000
#                                        images, test: 100, neighbors: exact euclidean top-10) and a
#                                        `type: dataset` config CFG that `vforge load run` loaded
#                                        (ids `row`, so neighbour row r is point r)

readme_fixture() {
  local name=$1
  shift
  "_readme_fx_${name//-/_}" "$@"
}

_readme_s3() {
  curl -sS --aws-sigv4 "aws:amz:us-east-1:s3" -u "${VF_S3_ACCESS_KEY:-AKTEST}:${VF_S3_SECRET_KEY:-SKTEST}" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}

_readme_fx_demo() {
  local out=build/demo/fashion-mnist fm=/usr/share/datasets/fashion-mnist
  [ -f "$out/batch_00000001.parquet" ] && return 0
  vforge --quiet convert "$fm/t10k-images-idx3-ubyte.gz" --labels "$fm/t10k-labels-idx1-ubyte.gz" \
    --rows-per-file 5000 --output "$out" --overwrite
}

_readme_fx_s3_corpus() {
  local bucket=$1 prefix=$2 code f
  code=$(_readme_s3 -o /dev/null -w '%{http_code}' -X PUT "$VF_S3_ENDPOINT/$bucket")
  case $code in 200 | 409) ;; *) echo "readme_fixture s3-corpus: cannot create bucket $bucket (HTTP $code)" >&2; return 1 ;; esac
  echo "$bucket" >> "$README_STATE/s3-buckets"
  for f in $(cd "$README_SRC/examples/corpus" && find . -name '*.parquet' | sort); do
    code=$(_readme_s3 -o /dev/null -w '%{http_code}' -T "$README_SRC/examples/corpus/$f" "$VF_S3_ENDPOINT/$bucket/$prefix/${f#./}")
    [ "$code" = 200 ] || { echo "readme_fixture s3-corpus: upload of $f: HTTP $code" >&2; return 1; }
  done
}

_readme_fx_hf_repo() {
  local ns=$1 repo=$2 dir=$3
  echo "$ns/$repo" >> "$README_STATE/hf-repos"
  bash "$README_SRC/tests/services/hf/publish.sh" "$dir" "$ns" "$repo" > /dev/null
}

_readme_fx_hf_corpus() {
  local ns=$1 repo=$2 d="$README_STATE/hf-$1-$2"
  mkdir -p "$d/$3"
  cp -r "$README_SRC/examples/corpus/." "$d/$3/"
  _readme_fx_hf_repo "$ns" "$repo" "$d"
}

_readme_fx_http_parts() {
  local ns=$1 repo=$2 d="$README_STATE/http-$1-$2"
  mkdir -p "$d/data"
  cp "$README_SRC/examples/corpus/rank00/batch_00000000.parquet" "$d/data/part-0.parquet"
  cp "$README_SRC/examples/corpus/rank00/batch_00000001.parquet" "$d/data/part-1.parquet"
  _readme_fx_hf_repo "$ns" "$repo" "$d"
}

_readme_fx_laion() {
  local ns=$1 repo=$2 count=$3 d="$README_STATE/laion-$1-$2"
  mkdir -p "$d/laion"
  "${VF_PY:?}" - "$d/laion" "$count" << 'EOF' || return 1
import sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
out, count = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
for i in range(count):
    np.save(f"{out}/img_emb_{i}.npy", rng.standard_normal((3, 8), dtype=np.float32))
    pq.write_table(pa.table({
        "caption": [f"image {3 * i + r}" for r in range(3)],
        "similarity": pa.array([0.25, None, 0.5], pa.float64()),
        "exif": ['{"camera": "x"}'] * 3,
    }), f"{out}/metadata_{i}.parquet")
EOF
  _readme_fx_hf_repo "$ns" "$repo" "$d"
}

_readme_fx_npy() {
  /usr/bin/python3 - "$@" << 'EOF'
import sys
import numpy as np
path, rows, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
np.save(path, np.random.default_rng(1).standard_normal((rows, dim), dtype=np.float32))
EOF
}

_readme_fx_ann_hdf5() {
  local file=$1 cfg=$2
  /usr/bin/python3 - "$file" << 'EOF' || return 1
import gzip, sys
import h5py, numpy as np
fm = "/usr/share/datasets/fashion-mnist"
def idx(path, n):
    b = gzip.open(path, "rb").read()
    nd = b[3]
    dims = [int.from_bytes(b[4 + 4 * i:8 + 4 * i], "big") for i in range(nd)]
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)[:n].reshape(n, -1).astype(np.float32)
train, test = idx(f"{fm}/train-images-idx3-ubyte.gz", 3000), idx(f"{fm}/t10k-images-idx3-ubyte.gz", 100)
q, t = test.astype(np.float64), train.astype(np.float64)
d2 = (q ** 2).sum(1)[:, None] + (t ** 2).sum(1)[None, :] - 2 * q @ t.T   # exact: integer pixels
nb = np.argsort(d2, axis=1, kind="stable")[:, :10]
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["distance"] = "euclidean"
    f["train"], f["test"] = train, test
    f["neighbors"] = nb.astype(np.int32)
    f["distances"] = np.sqrt(np.take_along_axis(d2, nb, 1)).astype(np.float32)
EOF
  cat > "$cfg" << EOF
datasource:
  type: dataset
  vectors: {format: hdf5, path: $file}
  id_expression: row
vectors: {image: {type: dense, source: vectors}}
vectorstore: {type: local, path: vforge-data, collection_name: fashion-mnist-hdf5, params: {recreate: true}}
EOF
  vforge --quiet load run "$cfg" > /dev/null
}

readme_cleanup() {
  local b k ns_repo
  if [ -f "$README_STATE/s3-buckets" ] && [ -n "${VF_S3_ENDPOINT:-}" ]; then
    for b in $(sort -u "$README_STATE/s3-buckets"); do
      _readme_s3 "$VF_S3_ENDPOINT/$b?list-type=2" 2> /dev/null | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' |
        while IFS= read -r k; do _readme_s3 -X DELETE "$VF_S3_ENDPOINT/$b/$k" > /dev/null 2>&1; done
      _readme_s3 -X DELETE "$VF_S3_ENDPOINT/$b" > /dev/null 2>&1
    done
  fi
  if [ -f "$README_STATE/hf-repos" ] && [ -n "${VF_HF_ROOT:-}" ]; then
    for ns_repo in $(sort -u "$README_STATE/hf-repos"); do
      rm -rf "${VF_HF_ROOT:?}/repos/$ns_repo" "${VF_HF_ROOT:?}/api/$ns_repo"
    done
  fi
  return 0
}
