"""threads= (issue 20: "every call takes threads="): every public call takes it and checks it
as the CLI checks --threads (an integer in 1..4096, else UsageError, before any work), and the
calls with parallel work give the same result with 1 and with 2 threads."""
import inspect
import os
import textwrap

import numpy as np
import pytest

import vforge

CALLS = [vforge.open, vforge.read_vectors, vforge.brute_force, vforge.generate_queries, vforge.recall,
         vforge.load, vforge.bench, vforge.Index.build, vforge.Index.load, vforge.Index.search,
         vforge.Index.save]


def test_every_call_takes_threads():
    for fn in CALLS:
        p = inspect.signature(fn).parameters.get("threads")
        assert p is not None and p.kind == p.KEYWORD_ONLY and p.default is None, fn.__qualname__
        assert "threads" in (fn.__doc__ or ""), fn.__qualname__  # the docstring says what it does


@pytest.mark.parametrize("bad", [0, -1, 4097, 1.5, True, "2"])
def test_bad_threads_raise_usage_error_everywhere(corpus, tmp_path, bad):
    x = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
    ix = vforge.Index.build(x, type="flat", nlist=2)
    h = vforge.brute_force(x, x[:2], 3)
    calls = {
        "open": lambda: vforge.open(corpus, threads=bad),
        "read_vectors": lambda: vforge.read_vectors(corpus, threads=bad),
        "brute_force": lambda: vforge.brute_force(x, x[:2], 3, threads=bad),
        "brute_force(file)": lambda: vforge.brute_force(corpus, x[:2], 3, threads=bad),
        "generate_queries": lambda: vforge.generate_queries(corpus, 5, output=str(tmp_path / "q.parquet"), threads=bad),
        "recall": lambda: vforge.recall(h, h, 3, threads=bad),
        "load": lambda: vforge.load(str(tmp_path / "missing.yaml"), threads=bad),
        "bench": lambda: vforge.bench(queries="q", ground_truth="g", k=3, store="local", path=str(tmp_path),
                                      collection="c", threads=bad),
        "Index.build": lambda: vforge.Index.build(x, type="flat", nlist=2, threads=bad),
        "Index.load": lambda: vforge.Index.load(ix.path, threads=bad),
        "Index.search": lambda: ix.search(x[:2], 3, 1, threads=bad),
        "Index.save": lambda: ix.save(tmp_path / "copy.ivf", threads=bad),
    }
    for name, call in calls.items():
        with pytest.raises(vforge.UsageError, match=r"threads must be an integer in 1\.\.4096"):
            call()
    assert not os.path.exists(tmp_path / "q.parquet") and not os.path.exists(tmp_path / "copy.ivf")


def test_one_and_two_threads_give_the_same_results(corpus, tmp_path):
    q1 = vforge.generate_queries(corpus, 25, seed=9, output=str(tmp_path / "q1.parquet"), threads=1)
    q2 = vforge.generate_queries(corpus, 25, seed=9, output=str(tmp_path / "q2.parquet"), threads=2)
    assert open(q1, "rb").read() == open(q2, "rb").read()
    t1 = vforge.open(corpus, threads=1).read_all()
    t2 = vforge.open(corpus, threads=2).read_all()
    assert t1.equals(t2)
    x = vforge.read_vectors(corpus, threads=2)
    assert np.array_equal(x, vforge.read_vectors(corpus, threads=1))
    qv = x[::250]
    for kind in ("sq8", "pq", "rabitq"):
        a = vforge.Index.build(x, type=kind, nlist=16, path=str(tmp_path / f"{kind}1.ivf"), threads=1)
        b = vforge.Index.build(x, type=kind, nlist=16, path=str(tmp_path / f"{kind}2.ivf"), threads=2)
        assert open(a.path, "rb").read() == open(b.path, "rb").read(), kind
        s1, s2 = a.search(qv, 10, 4, threads=1), a.search(qv, 10, 4, threads=2)
        assert np.array_equal(s1.ids, s2.ids) and np.array_equal(s1.scores, s2.scores), kind
    g1 = vforge.brute_force(corpus, q1, 10, "euclid", threads=1)
    g2 = vforge.brute_force(corpus, q1, 10, "euclid", threads=2)
    assert g1.ids.tolist() == g2.ids.tolist() and np.array_equal(g1.scores, g2.scores)
    assert vforge.recall(g1, g2, 10, threads=1) == 1.0
    # load (one upload worker: the same row order; finalize trains the store's IVF index on
    # `threads`) and bench through it
    reps = []
    for threads in (1, 2):
        cfg = tmp_path / f"load{threads}.yaml"
        cfg.write_text(textwrap.dedent(f"""\
            vectors:
              emb: {{type: dense, column: emb, distance: cosine}}
            datasource: {{uri: {corpus}}}
            vectorstore: {{type: local, path: {tmp_path / f'store{threads}'}, collection_name: ex,
                          params: {{index: {{type: sq8, nlist: 32, min_rows: 1000}}}}}}
            loader: {{batch_size: 500, concurrency: 1}}
            """))
        assert vforge.load(str(cfg), threads=threads)["points"] == 6000
        gt = vforge.brute_force(corpus, q1, 10, output=str(tmp_path / "gt.parquet"))
        reps.append(vforge.bench(str(cfg), queries=q1, ground_truth=gt.path, k=10, nprobe=4, threads=threads))
    for key in ("queries", "recall", "recall_min", "recall_max", "errors"):
        assert reps[0][key] == reps[1][key], key
