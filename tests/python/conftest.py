"""Fixtures of the Python tests: the repository, the CLI binary, a writable copy of the example
corpus (generate-queries / brute-force write into <prefix>/eval/), and a helper to run the CLI."""
import os
import shutil
import subprocess

import numpy as np
import pytest

SRC = os.environ.get("VF_SRC", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
VFORGE = os.environ.get("VFORGE", os.path.join(SRC, "build", "vforge"))


@pytest.fixture
def corpus(tmp_path):
    """a writable copy of examples/corpus (2 files x 3000 rows, emb: 32-d float, id, text, meta)"""
    dst = tmp_path / "corpus"
    shutil.copytree(os.path.join(SRC, "examples", "corpus"), dst)
    return str(dst)


def cli(*args, check=True):
    """run the vforge CLI; returns CompletedProcess (stdout/stderr as text)"""
    r = subprocess.run([VFORGE, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"vforge {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}")
    return r


@pytest.fixture
def run_cli():
    return cli


def truth_rows(path):
    """(hit_ids, hit_scores) rows of a brute-force / index search results file"""
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return t.column("hit_ids").to_pylist(), t.column("hit_scores").to_pylist()


def assert_hits_equal_file(h, path, k):
    """Hits h are the results file's rows: the same ids and float32 scores, padded past them"""
    ids, scores = truth_rows(path)
    assert h.ids.shape == (len(ids), k)
    for i, (row_ids, row_scores) in enumerate(zip(ids, scores)):
        n = len(row_ids)
        assert h.ids[i, :n].tolist() == row_ids, i
        assert np.array_equal(h.scores[i, :n], np.array(row_scores, dtype=np.float32)), i
        assert all(v is None for v in h.ids[i, n:]) and np.isnan(h.scores[i, n:]).all(), i
