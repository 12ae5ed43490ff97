"""vforge.open / read_vectors / brute_force over the other kinds of source: a component dataset
(npy vector parts paired with parquet payload parts, `id_expression: row`), a vector file, and an
s3:// corpus on the suite's radosgw (skipped without it; tests/services/with-services.sh exports
VF_S3_ENDPOINT / VF_S3_ACCESS_KEY / VF_S3_SECRET_KEY)."""
import os
import shutil
import subprocess
import textwrap
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vforge

from conftest import SRC


def test_component_dataset(tmp_path):
    rng = np.random.default_rng(2)
    sizes = [5, 1, 7]
    parts = []
    for i, n in enumerate(sizes):
        v = rng.standard_normal((n, 6)).astype(np.float32 if i != 1 else np.float16)
        np.save(tmp_path / f"v_{i}.npy", v)
        parts.append(v.astype(np.float32))
        first = sum(sizes[:i])
        pq.write_table(pa.table({"label": pa.array([f"l{first + r}" for r in range(n)]),
                                 "score": pa.array([float(first + r) / 2 for r in range(n)], pa.float64()),
                                 "tags": pa.array([[r] * (r % 3) for r in range(n)], pa.list_(pa.int16()))}),
                       tmp_path / f"p_{i}.parquet", row_group_size=4)
    cfg = tmp_path / "ds.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        vectors:
          image: {{type: dense, source: vectors, distance: dot}}
        datasource:
          type: dataset
          vectors: {{format: npy, parts: {{count: 3, path: '{tmp_path}/v_{{i}}.npy'}}}}
          payload: {{format: parquet, parts: {{count: 3, path: '{tmp_path}/p_{{i}}.parquet'}}}}
          id_expression: row
        vectorstore: {{type: local, path: {tmp_path}/store, collection_name: ds}}
        """))
    want = np.concatenate(parts)
    t = vforge.open(str(cfg)).read_all()
    assert t.column_names == ["__id__", "image", "label", "score", "tags", "__source_file__", "__source_row__"]
    assert t.schema.field("__id__").type == pa.uint64()
    assert t.column("__id__").to_pylist() == list(range(13))
    assert t.schema.field("tags").type == pa.list_(pa.int16())
    assert t.column("label").to_pylist() == [f"l{i}" for i in range(13)]
    assert t.schema.field("image").metadata[b"vforge.distance"] == b"dot"
    assert np.array_equal(t.column("image").combine_chunks().values.to_numpy().reshape(-1, 6), want)
    assert np.array_equal(vforge.read_vectors(str(cfg)), want)
    h = vforge.brute_force(str(cfg), want[:3], 2, "euclid")
    assert h.ids.dtype == np.int64 and h.ids[:, 0].tolist() == [0, 1, 2]


def test_vector_file(tmp_path):
    x = np.random.default_rng(4).standard_normal((50, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    t = vforge.open(str(tmp_path / "x.npy")).read_all()
    assert t.column_names == ["__id__", "vector", "__source_file__", "__source_row__"]
    assert np.array_equal(t.column("vector").combine_chunks().values.to_numpy().reshape(-1, 8), x)
    a = vforge.brute_force(str(tmp_path / "x.npy"), x[:4], 3, "euclid")
    b = vforge.brute_force(x, x[:4], 3, "euclid")
    assert np.array_equal(a.ids, b.ids) and np.array_equal(a.scores, b.scores)


@pytest.mark.skipif(not os.environ.get("VF_S3_ENDPOINT") or not shutil.which("curl"),
                    reason="no radosgw (VF_S3_ENDPOINT unset) or no curl")
def test_s3_corpus_equals_local(tmp_path, monkeypatch):
    ep = os.environ["VF_S3_ENDPOINT"]
    ak = os.environ.get("VF_S3_ACCESS_KEY", "AKTEST")
    sk = os.environ.get("VF_S3_SECRET_KEY", "SKTEST")
    bucket = f"test-py-{os.getpid()}-{int(time.time())}"

    def s3curl(*args):
        return subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4",
                               "aws:amz:us-east-1:s3", "-u", f"{ak}:{sk}", "-H",
                               "x-amz-content-sha256: UNSIGNED-PAYLOAD", *args],
                              capture_output=True, text=True).stdout

    mirror = tmp_path / "mirror"
    shutil.copytree(os.path.join(SRC, "examples", "corpus"), mirror / "corpus")
    keys = sorted(os.path.relpath(os.path.join(d, f), mirror) for d, _, fs in os.walk(mirror) for f in fs)
    assert s3curl("-X", "PUT", f"{ep}/{bucket}") == "200"
    try:
        for k in keys:
            assert s3curl("-T", str(mirror / k), f"{ep}/{bucket}/{k}") == "200"
        for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("AWS_ENDPOINT_URL", ep)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", ak)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", sk)
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
        remote = vforge.open(f"s3://{bucket}/corpus").read_all()
        local = vforge.open(str(mirror / "corpus"), id_root=str(mirror)).read_all()
        assert remote.column("__id__").to_pylist() == local.column("__id__").to_pylist()
        assert remote.column("text").to_pylist() == local.column("text").to_pylist()
        assert remote.column("__source_file__").to_pylist()[0] == "corpus/rank00/batch_00000000.parquet"
        assert np.array_equal(vforge.read_vectors(f"s3://{bucket}/corpus", threads=2),
                              vforge.read_vectors(str(mirror / "corpus")))
    finally:
        for k in keys:
            s3curl("-X", "DELETE", f"{ep}/{bucket}/{k}")
        s3curl("-X", "DELETE", f"{ep}/{bucket}")
