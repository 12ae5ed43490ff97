"""Results equal the CLI's: generate_queries and brute_force write byte-identical files, IVF
indexes built from Python and by `vforge index build` are byte-identical, bench returns the dict
`vforge bench --json` prints, load returns load's --json report; 1-thread and N-thread results are
equal; NumPy round trips (read_vectors, arrays in and out); recall; exceptions on bad input;
Ctrl-C through the library's cancellation flag."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

import vforge

from conftest import SRC, VFORGE, cli


def read_bytes(p):
    with open(p, "rb") as f:
        return f.read()


def test_generate_queries_and_brute_force_equal_the_cli(corpus, tmp_path):
    cli("generate-queries", corpus, "-n", 40, "--seed", 7)
    qcli = os.path.join(corpus, "eval", "queries_40.parquet")
    qpy = vforge.generate_queries(corpus, 40, seed=7, output=str(tmp_path / "q.parquet"))
    assert read_bytes(qpy) == read_bytes(qcli)
    for metric in ("cosine", "euclid", "dot", "manhattan"):
        out_cli = tmp_path / f"gt_cli_{metric}.parquet"
        cli("--threads", 1, "brute-force", corpus, "--queries", qcli, "-k", 10, "--metric", metric,
            "--output", out_cli)
        out_py = tmp_path / f"gt_py_{metric}.parquet"
        h = vforge.brute_force(corpus, qcli, 10, metric, output=str(out_py), threads=2)
        assert read_bytes(out_py) == read_bytes(out_cli), metric
        assert h.path == str(out_py)
        t = pq.read_table(out_cli)
        assert h.ids.tolist() == t.column("hit_ids").to_pylist()
        assert np.array_equal(h.scores, np.array(t.column("hit_scores").to_pylist(), dtype=np.float32))
    # output=True: the CLI's own default path
    h = vforge.brute_force(corpus, qcli, 10, "euclid", output=True)
    assert h.path == os.path.join(corpus, "eval", "brute_force_queries_40_k10.parquet")
    assert read_bytes(h.path) == read_bytes(tmp_path / "gt_cli_euclid.parquet")


def test_brute_force_threads_and_array_queries(corpus):
    q = vforge.read_vectors(corpus)[:25]
    a = vforge.brute_force(corpus, q, 7, "dot", threads=1)
    b = vforge.brute_force(corpus, q, 7, "dot", threads=2)
    assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.scores, b.scores)
    assert a.ids.dtype == object and len(a.ids[0][0]) == 36


def test_brute_force_arrays_against_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5000, 24)).astype(np.float32)
    q = rng.standard_normal((30, 24)).astype(np.float32)
    d2 = ((q[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1)
    want = np.argsort(d2, axis=1, kind="stable")[:, :5]
    h1 = vforge.brute_force(x, q, 5, "euclid", threads=1)
    h2 = vforge.brute_force(x, q, 5, "euclid", threads=2)
    assert h1.ids.dtype == np.int64 and h1.ids.shape == (30, 5)
    assert np.array_equal(h1.ids, want)
    assert np.array_equal(h1.ids, h2.ids) and np.array_equal(h1.scores, h2.scores)
    assert np.allclose(h1.scores, -np.sqrt(np.take_along_axis(d2, want, 1)), rtol=1e-5)
    # fewer rows than k: -1 and NaN pad
    h = vforge.brute_force(x[:3], q[:2], 5, "dot")
    assert (h.ids[:, 3:] == -1).all() and np.isnan(h.scores[:, 3:]).all()
    assert vforge.recall(h1, h1, 5) == 1.0


def test_read_vectors_round_trips(corpus, tmp_path):
    x1 = vforge.read_vectors(corpus, threads=1)
    x2 = vforge.read_vectors(corpus, "emb", threads=2)
    assert x1.shape == (6000, 32) and x1.dtype == np.float32 and x1.flags.c_contiguous
    assert np.array_equal(x1, x2)
    t = vforge.open(corpus, ["emb"], with_id=False, provenance=False).read_all()
    assert np.array_equal(x1, t.column("emb").combine_chunks().values.to_numpy().reshape(-1, 32))
    npy = str(tmp_path / "v.npy")
    np.save(npy, x1[:100].astype(np.float64))
    assert np.array_equal(vforge.read_vectors(npy), x1[:100])
    x1[0, 0] = 42.0  # the array is writable and owns its memory
    assert x1[0, 0] == 42.0


def test_index_build_equals_cli_and_round_trips(corpus, tmp_path):
    out_cli = tmp_path / "cli.ivf"
    cli("--threads", 1, "index", "build", corpus, "--output", out_cli, "--type", "sq8", "--nlist", 16)
    ix = vforge.Index.build(corpus, type="sq8", nlist=16, path=str(tmp_path / "py.ivf"), threads=2)
    assert read_bytes(ix.path) == read_bytes(out_cli)
    assert ix.report["rows"] == 6000 and ix.report["nlist"] == 16 and ix.report["type"] == "sq8"
    assert ix.info["dim"] == 32 and len(ix) == 6000
    q = vforge.read_vectors(corpus)[:20]
    h = ix.search(q, 5, nprobe=4)
    saved = ix.save(tmp_path / "copy.ivf")
    h2 = vforge.Index.load(saved).search(q, 5, nprobe=4, threads=1)
    assert h.ids.tolist() == h2.ids.tolist() and np.array_equal(h.scores, h2.scores)
    # flat with every list probed is exact search
    flat = vforge.Index.build(corpus, type="flat", nlist=8)
    exact = vforge.brute_force(corpus, q, 5)
    got = flat.search(q, 5, nprobe=8)
    assert got.ids.tolist() == exact.ids.tolist()
    path = flat.path
    flat.close()
    assert not os.path.exists(path)  # a temporary index is removed with its object


def test_index_from_array_has_row_ids():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3000, 16)).astype(np.float32)
    ix = vforge.Index.build(x, type="flat", nlist=4, metric="euclid")
    h = ix.search(x[:10], 3, nprobe=4)
    assert h.ids.dtype == np.int64
    assert h.ids[:, 0].tolist() == list(range(10))
    assert vforge.recall(h, vforge.brute_force(x, x[:10], 3, "euclid"), 3) == 1.0


def test_recall_against_a_truth_file(corpus, tmp_path):
    q = vforge.generate_queries(corpus, 30, output=str(tmp_path / "q.parquet"))
    gt = str(tmp_path / "gt.parquet")
    vforge.brute_force(corpus, q, 10, output=gt)
    ix = vforge.Index.build(corpus, type="pq", nlist=16, pq_m=8)
    qv = pq.read_table(q).column("emb").to_pylist()
    h = ix.search(np.array(qv, dtype=np.float32), 10, nprobe=2)
    r = vforge.recall(h, gt, 10)
    out = cli("index", "search", ix.path, "--queries", q, "-k", 10, "--nprobe", 2,
              "--ground-truth", gt, "--output", tmp_path / "s.parquet", "--json").stdout
    assert r == pytest.approx(json.loads(out)["recall"], abs=1e-12)
    assert vforge.recall(h.ids, gt, 10) == r
    assert vforge.recall(h, gt, 10, ties=True) >= r
    assert 0.0 < r < 1.0


def local_config(tmp_path, corpus):
    cfg = tmp_path / "load.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        vectors:
          emb: {{type: dense, column: emb, distance: cosine}}
        datasource:
          uri: {corpus}
          payload_fields: {{text: text}}
        vectorstore: {{type: local, path: {tmp_path / 'store'}, collection_name: ex}}
        loader: {{batch_size: 500, prefetch_size: 2000, concurrency: 2}}
        """))
    return str(cfg)


def test_load_and_bench_return_the_cli_json(corpus, tmp_path):
    cfg = local_config(tmp_path, corpus)
    events = []
    rep = vforge.load(cfg, progress=events.append, threads=2)
    assert set(rep) >= {"points", "files", "bytes_read", "seconds", "points_per_s", "retries", "skipped_rows"}
    assert rep["points"] == 6000 and rep["files"] == 2
    loads = [e for e in events if e["phase"] == "load"]  # finalize's stages follow (issue 14)
    assert loads and loads[-1]["rows_done"] == 6000 and loads[-1]["stage"] is None
    q = vforge.generate_queries(corpus, 20)
    gt = vforge.brute_force(corpus, q, 10, output=True).path
    py = vforge.bench(cfg, queries=q, ground_truth=gt, k=10)
    out = cli("bench", cfg, "--queries", q, "--ground-truth", gt, "-k", 10, "--json").stdout
    want = json.loads(out)
    want.pop("peak_rss_bytes")  # the CLI process's own figure (every --json has it), not the report's
    assert set(py) == set(want) and set(py["latency_ms"]) == set(want["latency_ms"])
    for key in ("k", "queries", "recall", "recall_min", "recall_max", "errors"):
        assert py[key] == want[key], key
    assert py["recall"] == 1.0  # exact search below the store's index threshold


def test_progress_callback_exception_is_raised(corpus, tmp_path):
    cfg = local_config(tmp_path, corpus)

    def boom(ev):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        vforge.load(cfg, progress=boom)


def test_errors_carry_vforge_messages(corpus, tmp_path):
    with pytest.raises(vforge.UsageError, match="unknown metric 'l3'"):
        vforge.brute_force(corpus, vforge.read_vectors(corpus)[:2], 3, "l3")
    with pytest.raises(vforge.UsageError) as e:
        vforge.brute_force(corpus, vforge.read_vectors(corpus)[:2], 0)
    assert "-k" in str(e.value) and e.value.exit_code == 2
    with pytest.raises(vforge.DataError, match="dimension"):
        vforge.brute_force(corpus, np.zeros((2, 7), np.float32), 3)
    with pytest.raises(vforge.NotFoundError):
        vforge.read_vectors(str(tmp_path / "missing"))
    with pytest.raises(vforge.UsageError, match="not a dense vector column"):
        vforge.read_vectors(corpus, "text")
    with pytest.raises(vforge.DataError, match="row 4"):
        vforge.read_vectors(os.path.join(SRC, "tests", "data", "null_element.parquet"))
    bad = tmp_path / "bad.ivf"
    bad.write_bytes(b"VFIVF\0\0\1" + b"\0" * 57)
    with pytest.raises(vforge.DataError, match="corrupt IVF index"):
        vforge.Index.load(bad)
    with pytest.raises(vforge.UsageError, match="unknown index type"):
        vforge.Index.build(corpus, type="hnsw")
    with pytest.raises(vforge.UsageError, match="queries have dimension"):
        vforge.brute_force(np.zeros((4, 3), np.float32), np.zeros((1, 2), np.float32), 1)
    with pytest.raises(vforge.UsageError, match="rows of hits"):
        vforge.recall([["1"]], ([["1"], ["2"]], [[1.0], [1.0]]), 1)
    assert issubclass(vforge.NotFoundError, FileNotFoundError) and issubclass(vforge.DataError, ValueError)


INTERRUPT = textwrap.dedent("""\
    import sys, time, numpy as np, vforge
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400000, 128)).astype(np.float32)
    q = rng.standard_normal((3000, 128)).astype(np.float32)
    print("ready", flush=True)
    t0 = time.monotonic()
    try:
        vforge.brute_force(x, q, 10, "euclid", threads=1)
        print("finished", time.monotonic() - t0, flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.monotonic() - t0, flush=True)
        vforge.brute_force(x[:1000], q[:5], 3)  # the flag was reset: the next call runs
        print("next ok", flush=True)
""")


def test_ctrl_c_interrupts_a_long_call(tmp_path):
    script = tmp_path / "interrupt.py"
    script.write_text(INTERRUPT)
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 0, out
    assert out.startswith("interrupted"), out
    assert "next ok" in out
    assert took < 20, took  # one block of rows after the signal (a loaded machine is slow)
