"""Filters from Python (issues 19 + 20): vforge.brute_force(..., filter=) goes through the library's
filtered brute force (eval_bf_opts.filter, the path of `vforge brute-force --filter`), so its hits
and files equal the CLI's; generate_queries(filter_template=) writes the CLI's __filter__ file;
bench(filter=, nprobe=, warmup=, sweep=, concurrency=[...]) returns what `vforge bench --json`
prints with the same flags."""
import hashlib
import json
import os
import textwrap

import numpy as np
import pyarrow.parquet as pq
import pytest

import vforge

from conftest import assert_hits_equal_file, cli, truth_rows

F = '{"must": [{"key": "meta.lang", "match": {"value": "en"}}], "must_not": [{"key": "id", "range": {"lt": 100}}]}'


def read_bytes(p):
    with open(p, "rb") as f:
        return f.read()


@pytest.fixture
def queries(corpus):
    cli("generate-queries", corpus, "-n", 40, "--seed", 3)
    return os.path.join(corpus, "eval", "queries_40.parquet")


def test_filtered_brute_force_equals_the_cli(corpus, queries, tmp_path):
    for metric in ("cosine", "euclid"):
        out_cli = tmp_path / f"cli_{metric}.parquet"
        cli("--threads", 1, "brute-force", corpus, "--queries", queries, "-k", 10, "--metric", metric,
            "--filter", F, "--output", out_cli)
        out_py = tmp_path / f"py_{metric}.parquet"
        h = vforge.brute_force(corpus, queries, 10, metric, filter=F, output=str(out_py), threads=2)
        assert read_bytes(out_py) == read_bytes(out_cli), metric
        assert_hits_equal_file(h, out_cli, 10)
    # the filter really applies: no hit has id < 100 or a non-English meta
    unf = vforge.brute_force(corpus, queries, 10, "euclid")
    assert unf.ids.tolist() != h.ids.tolist()
    # default output path: the CLI's ..._f<h>_k<K> name, md5 of the filter text
    d = vforge.brute_force(corpus, queries, 10, "euclid", filter=F, output=True)
    tag = hashlib.md5(F.encode()).hexdigest()[:8]
    assert d.path == os.path.join(corpus, "eval", f"brute_force_queries_40_f{tag}_k10.parquet")
    assert read_bytes(d.path) == read_bytes(tmp_path / "cli_euclid.parquet")
    # @FILE and a dict (serialised compactly) are the CLI's --filter @FILE / that text
    ffile = tmp_path / "f.json"
    ffile.write_text(F)
    assert vforge.brute_force(corpus, queries, 10, "euclid", filter="@" + str(ffile)).ids.tolist() == h.ids.tolist()
    fd = json.loads(F)
    compact = json.dumps(fd, separators=(",", ":"))
    out_cli = tmp_path / "cli_dict.parquet"
    cli("brute-force", corpus, "--queries", queries, "-k", 10, "--metric", "euclid", "--filter", compact,
        "--output", out_cli)
    out_py = tmp_path / "py_dict.parquet"
    vforge.brute_force(corpus, queries, 10, "euclid", filter=fd, output=str(out_py))
    assert read_bytes(out_py) == read_bytes(out_cli)


def test_array_queries_are_filtered_too(corpus):
    q = vforge.read_vectors(corpus)[:5]
    h = vforge.brute_force(corpus, q, 5, "dot", filter={"must": [{"key": "id", "range": {"gte": 5990}}]})
    ids = vforge.brute_force(corpus, q, 6000, "dot").ids
    # the 10 rows with id >= 5990 are the only candidates: the top 5 of them, in the order of the
    # unfiltered ranking
    rows = vforge.open(corpus, ["id"]).read_all()
    allowed = {u for u, i in zip(rows.column("__id__").to_pylist(), rows.column("id").to_pylist()) if i >= 5990}
    assert len(allowed) == 10
    for i in range(5):
        want = [u for u in ids[i] if u in allowed][:5]
        assert h.ids[i].tolist() == want


def test_fewer_matches_than_k_as_the_cli(corpus, queries, tmp_path):
    few = '{"must": [{"key": "id", "range": {"lt": 4}}]}'
    out_cli = tmp_path / "few_cli.parquet"
    r = cli("brute-force", corpus, "--queries", queries, "-k", 10, "--filter", few, "--output", out_cli)
    assert "with fewer than 10 hits" in r.stderr
    h = vforge.brute_force(corpus, queries, 10, filter=few, output=str(tmp_path / "few_py.parquet"))
    assert read_bytes(tmp_path / "few_py.parquet") == read_bytes(out_cli)
    assert_hits_equal_file(h, out_cli, 10)
    assert all(sum(v is not None for v in row) == 4 for row in h.ids)
    none = '{"must": [{"key": "id", "range": {"lt": 0}}]}'
    h = vforge.brute_force(corpus, queries, 10, filter=none, output=str(tmp_path / "none_py.parquet"))
    out_cli = tmp_path / "none_cli.parquet"
    cli("brute-force", corpus, "--queries", queries, "-k", 10, "--filter", none, "--output", out_cli)
    assert read_bytes(tmp_path / "none_py.parquet") == read_bytes(out_cli)
    assert all(v is None for v in h.ids.ravel()) and np.isnan(h.scores).all()
    assert truth_rows(out_cli)[0] == [[]] * 40


def test_bad_filters_raise_vforge_messages(corpus, queries, tmp_path):
    bad = '{"must": [{"key": "id", "rnage": {"lt": 3}}]}'
    r = cli("brute-force", corpus, "--queries", queries, "-k", 10, "--filter", bad, check=False)
    assert r.returncode == 2
    with pytest.raises(vforge.UsageError) as e:
        vforge.brute_force(corpus, queries, 10, filter=bad)
    assert e.value.exit_code == 2 and str(e.value) and str(e.value) in r.stderr
    assert "rnage" in str(e.value)
    with pytest.raises(vforge.Error) as e:
        vforge.brute_force(corpus, queries, 10, filter="{not json")
    assert e.value.exit_code == 2
    with pytest.raises(vforge.UsageError, match="cannot open"):
        vforge.brute_force(corpus, queries, 10, filter="@" + str(tmp_path / "missing.json"))
    with pytest.raises(vforge.UsageError, match="no payload"):
        vforge.brute_force(np.zeros((4, 3), np.float32), np.zeros((1, 3), np.float32), 1, filter=F)
    with pytest.raises(vforge.UsageError, match="expected a filter"):
        vforge.brute_force(corpus, queries, 10, filter=3)
    assert not os.path.exists(os.path.join(corpus, "eval", "brute_force_queries_40_k10.parquet"))


TEMPLATE = ('{"must": [{"key": "id", "range": {"gte": "$id"}}], "should": [{"key": "text", "match": '
            '{"value": "$~text"}}, {"key": "meta.lang", "match": {"value": "en"}}]}')


def test_filter_template_and_per_query_filters(corpus, tmp_path):
    r = cli("generate-queries", corpus, "-n", 30, "--seed", 5, "--columns", "id", "--filter-template", TEMPLATE,
            "--json")
    qcli = json.loads(r.stdout)["output"]
    tag = hashlib.md5(TEMPLATE.encode()).hexdigest()[:8]
    assert qcli.endswith(f"queries_30_f{tag}.parquet")
    os.rename(qcli, tmp_path / "qcli.parquet")
    qpy = vforge.generate_queries(corpus, 30, seed=5, columns=["id"], filter_template=TEMPLATE)
    assert qpy == qcli
    assert read_bytes(qpy) == read_bytes(tmp_path / "qcli.parquet")
    assert pq.read_table(qpy).column("__filter__").null_count == 0
    # the __filter__ column filters each query; --filter as well is refused (exit 2), as the CLI
    out_cli = tmp_path / "t_cli.parquet"
    cli("brute-force", corpus, "--queries", qpy, "-k", 10, "--output", out_cli)
    h = vforge.brute_force(corpus, qpy, 10, output=str(tmp_path / "t_py.parquet"))
    assert read_bytes(tmp_path / "t_py.parquet") == read_bytes(out_cli)
    assert_hits_equal_file(h, out_cli, 10)
    assert sum(v is not None for v in h.ids.ravel()) > 100  # the filters match rows
    r = cli("brute-force", corpus, "--queries", qpy, "-k", 10, "--filter", F, check=False)
    assert r.returncode == 2
    with pytest.raises(vforge.UsageError) as e:
        vforge.brute_force(corpus, qpy, 10, filter=F)
    assert str(e.value) in r.stderr


def indexed_config(tmp_path, corpus):
    cfg = tmp_path / "load.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        vectors:
          emb: {{type: dense, column: emb, distance: cosine}}
        datasource:
          uri: {corpus}
          payload_fields: {{id: id, meta: meta}}
        vectorstore:
          type: local
          path: {tmp_path / 'store'}
          collection_name: ex
          params: {{index: {{type: sq8, nlist: 32, min_rows: 1000}}}}
        loader: {{batch_size: 1000, concurrency: 2}}
        """))
    return str(cfg)


STABLE = ("k", "queries", "recall", "recall_min", "recall_max", "errors", "filtered_queries", "no_truth_queries")


def assert_report_equal(py, want):
    # peak_rss_bytes is the CLI process's own (cli_write_json adds it to every --json); the
    # Python dict reports the library's run, not a process
    want = {k: v for k, v in want.items() if k != "peak_rss_bytes"}
    assert set(py) == set(want), (set(py) ^ set(want))
    for key in STABLE:
        if key in want:
            assert py[key] == want[key], key
    if "params" in want:
        assert py["params"] == want["params"]


def test_bench_filter_nprobe_and_sweeps_equal_the_cli(corpus, queries, tmp_path):
    cfg = indexed_config(tmp_path, corpus)
    vforge.load(cfg)
    gt = str(tmp_path / "gt.parquet")
    vforge.brute_force(corpus, queries, 10, filter=F, output=gt)
    args = ["bench", cfg, "--queries", queries, "--ground-truth", gt, "-k", 10, "--json"]
    want = json.loads(cli(*args, "--filter", F, "--nprobe", 2, "--warmup", 5).stdout)
    py = vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, filter=F, nprobe=2, warmup=5)
    assert_report_equal(py, want)
    assert py["filtered_queries"] == 40
    # a sweep: {"points": [...]}, one per value, as --sweep nprobe=1,4,32
    want = json.loads(cli(*args, "--filter", F, "--sweep", "nprobe=1,4,32").stdout)
    py = vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, filter=F, sweep={"nprobe": [1, 4, 32]})
    assert set(py) == {"points"} and len(py["points"]) == 3
    for a, b in zip(py["points"], want["points"]):
        assert_report_equal(a, b)
    assert [p["params"] for p in py["points"]] == [{"nprobe": 1}, {"nprobe": 4}, {"nprobe": 32}]
    # list-valued concurrency is the concurrency sweep (--concurrency 1,2), and a grid
    want = json.loads(cli(*args, "--filter", F, "--concurrency", "1,2", "--sweep", "nprobe=2,8").stdout)
    py = vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, filter=F, concurrency=[1, 2],
                      sweep=["nprobe=2,8"])
    assert [p["params"] for p in py["points"]] == [p["params"] for p in want["points"]]
    assert len(py["points"]) == 4
    for a, b in zip(py["points"], want["points"]):
        assert_report_equal(a, b)
    # refused as the CLI refuses them
    with pytest.raises(vforge.UsageError, match="give the value once"):
        vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, nprobe=2, sweep={"nprobe": [1, 2]})
    with pytest.raises(vforge.UsageError, match="hnsw"):
        vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, sweep={"hnsw-ef": [16]})
    with pytest.raises(vforge.UsageError, match="unknown"):
        vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, sweep={"nprobes": [16]})
    r = cli(*args, "--filter", '{"must": 3}', check=False)
    assert r.returncode == 2
    with pytest.raises(vforge.UsageError) as e:
        vforge.bench(cfg, queries=queries, ground_truth=gt, k=10, filter='{"must": 3}')
    assert str(e.value) in r.stderr


def test_recall_of_filtered_truth_as_bench(corpus, queries, tmp_path):
    """recall over min(k, the query's true hits); queries without a true hit left out of the mean"""
    few = '{"must": [{"key": "id", "range": {"lt": 4}}]}'
    gt = str(tmp_path / "few.parquet")
    truth = vforge.brute_force(corpus, queries, 10, filter=few, output=gt)
    unf = vforge.brute_force(corpus, queries, 10)
    want = np.mean([len(set(u) & {t for t in tr if t is not None}) / 4 for u, tr in zip(unf.ids, truth.ids)])
    assert vforge.recall(unf, gt, 10) == pytest.approx(want, abs=1e-12)
    assert vforge.recall(truth, gt, 10) == 1.0 and vforge.recall(truth, truth, 10) == 1.0
    # one query with 2 true hits (1 found), one with none: 0.5, not (0.5 + 1) / 2
    t_ids = [["a0000000-0000-0000-0000-000000000001", "a0000000-0000-0000-0000-000000000002"], [None, None]]
    t_sc = [[1.0, 0.5], [float("nan"), float("nan")]]
    hits = [["a0000000-0000-0000-0000-000000000001", "a0000000-0000-0000-0000-000000000009"], [None, None]]
    assert vforge.recall(hits, (t_ids, t_sc), 2) == 0.5
    # a truth no query has a hit in: no recall to measure (0, as bench reports it)
    none = str(tmp_path / "none.parquet")
    vforge.brute_force(corpus, queries, 10, filter='{"must": [{"key": "id", "range": {"lt": 0}}]}', output=none)
    assert vforge.recall(unf, none, 10) == 0.0
