"""Fixtures of the Python tests: the repository, the CLI binary, a writable copy of the example
corpus (generate-queries / brute-force write into <prefix>/eval/), and a helper to run the CLI."""
import os
import shutil
import subprocess

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
