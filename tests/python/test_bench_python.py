"""bench/python (issue 20's benchmarks) runs end to end on a tiny file: every side reads the same
array (the script asserts vforge, pyarrow and DuckDB agree), brute force agrees with faiss-cpu on
the top hit, and both targets are reported.  Timings are not checked (not a benchmark here)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import SRC


def test_bench_python_runs_small(tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("faiss")
    env = dict(os.environ, ROWS="1500", BF_ROWS="1500", QUERIES="12", K="5", REPEAT="1")
    r = subprocess.run([sys.executable, os.path.join(SRC, "bench", "python", "bench_python.py"), str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert re.search(r"read: .*duckdb_default_1500x768_zstd\.parquet: 1500 rows, 1 row group\(s\), ZSTD", out), out
    assert "target: vforge >= 1.5x pyarrow on 1 thread ->" in out
    assert "target: vforge >= 1.2x faiss-cpu ->" in out
    bf = out[out.index("brute force:"):].splitlines()
    rows = [line.split() for line in bf if re.match(r"\s+[12]\s", line)]
    assert [row[0] for row in rows] == ["1", "2"], out
    assert all(float(row[-1]) == 1.0 for row in rows), out  # same top-1 as faiss on every query
