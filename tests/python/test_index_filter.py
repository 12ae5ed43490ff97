"""Index.search(..., filter=) (issues 19 + 20): the filter of `vforge index search --filter F
--corpus C` — the corpus's payload matched to the index rows by point id, applied inside the list
scan, nprobe widened until k matches or the lists run out — so its hits equal the CLI's results
file; with every list probed a flat index's filtered hits are the exact filtered brute force."""
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

import vforge

from conftest import assert_hits_equal_file as assert_equal_file, cli

F = {"must": [{"key": "meta.lang", "match": {"value": "en"}}], "must_not": [{"key": "id", "range": {"lt": 100}}]}
FEW = '{"must": [{"key": "id", "range": {"lt": 3}}]}'


@pytest.fixture
def queries(corpus):
    cli("generate-queries", corpus, "-n", 30, "--seed", 5)
    path = f"{corpus}/eval/queries_30.parquet"
    t = pq.read_table(path)
    return path, np.array(t.column("emb").to_pylist(), dtype=np.float32)


@pytest.mark.parametrize("kind", ["sq8", "flat"])
def test_filtered_search_equals_the_cli(corpus, queries, tmp_path, kind):
    qpath, qv = queries
    idx = tmp_path / f"{kind}.ivf"
    cli("index", "build", corpus, "--output", idx, "--type", kind, "--nlist", 16)
    ftext = json.dumps(F)
    for nprobe, flt in ((1, ftext), (2, ftext), (1, FEW)):
        out = tmp_path / f"cli_{kind}_{nprobe}.parquet"
        cli("--threads", 1, "index", "search", idx, "--queries", qpath, "-k", 10, "--nprobe", nprobe,
            "--filter", flt, "--corpus", corpus, "--output", out)
        ix = vforge.Index.load(idx, corpus=corpus)
        for threads in (1, 2):
            h = ix.search(qv, 10, nprobe, filter=flt, threads=threads)
            assert_equal_file(h, out, 10)
        # a dict is the same filter (its compact JSON)
        if flt is ftext:
            assert ix.search(qv, 10, nprobe, filter=F).ids.tolist() == h.ids.tolist()
    # FEW matches 3 rows: every query gets exactly those 3 (nprobe widened to find them)
    assert all(sum(v is not None for v in row) == 3 for row in h.ids)
    # the filter applies: unfiltered hits differ, and no filtered hit breaks it
    unf = ix.search(qv, 10, 2)
    rows = vforge.open(corpus, ["id", "meta"]).read_all().to_pylist()
    ok = {r["__id__"] for r in rows if json.loads(r["meta"])["lang"] == "en" and r["id"] >= 100}
    h = ix.search(qv, 10, 2, filter=F)
    assert all(u in ok for u in h.ids.ravel() if u is not None)
    assert unf.ids.tolist() != h.ids.tolist()


def test_filtered_search_over_every_list_is_the_exact_filtered_brute_force(corpus, queries):
    qpath, qv = queries
    ix = vforge.Index.build(corpus, type="flat", nlist=16, metric="euclid")
    assert ix.corpus == corpus
    h = ix.search(qv, 10, nprobe=16, filter=F)
    bf = vforge.brute_force(corpus, qv, 10, "euclid", filter=F)
    assert h.ids.tolist() == bf.ids.tolist()
    assert np.allclose(h.scores, bf.scores, rtol=1e-5, atol=1e-5)
    # nprobe 1 widens too: still k hits per query (plenty of rows match)
    assert all(None not in row for row in ix.search(qv, 10, nprobe=1, filter=F).ids.tolist())
    # a filter no row matches: no hits, str-typed padding (the corpus's ids are UUIDs)
    none = ix.search(qv, 5, 4, filter={"must": [{"key": "id", "range": {"lt": 0}}]})
    assert none.ids.dtype == object and all(v is None for v in none.ids.ravel())
    assert np.isnan(none.scores).all()
    # an empty filter is no filter
    assert ix.search(qv, 10, 4, filter={}).ids.tolist() == ix.search(qv, 10, 4).ids.tolist()


def test_filtered_search_errors(corpus, queries, tmp_path):
    _, qv = queries
    x = vforge.read_vectors(corpus)
    ix = vforge.Index.build(x, type="flat", nlist=8)
    with pytest.raises(vforge.UsageError, match="corpus="):
        ix.search(qv, 5, 2, filter=F)
    ix = vforge.Index.build(corpus, type="flat", nlist=8)
    with pytest.raises(vforge.UsageError, match="rnage"):
        ix.search(qv, 5, 2, filter='{"must": [{"key": "id", "rnage": {"lt": 3}}]}')
    with pytest.raises(vforge.Error):
        ix.search(qv, 5, 2, filter="{not json")
    with pytest.raises(vforge.NotFoundError):
        ix.search(qv, 5, 2, filter=F, corpus=str(tmp_path / "missing"))
    with pytest.raises(vforge.UsageError):
        ix.search(qv, 5, 0)
    # an index over an array, searched against the corpus its rows came from: row-number ids are
    # not the corpus's point ids, so nothing matches (and a warning names the count)
    none = ix.search(qv, 5, 2, filter=F)
    assert none.ids.shape == (len(qv), 5)


def test_per_query_filters_equal_the_cli_with_a_filter_column(corpus, tmp_path):
    # generate-queries --filter-template: a __filter__ column, each query's own threshold
    tmpl = '{"must": [{"key": "id", "range": {"gte": "$id"}}]}'
    qpath = str(tmp_path / "qf.parquet")
    cli("generate-queries", corpus, "-n", 30, "--seed", 4, "--columns", "id", "--filter-template", tmpl,
        "--output", qpath)
    t = pq.read_table(qpath)
    texts = t.column("__filter__").to_pylist()
    qv = np.array(t.column("emb").to_pylist(), dtype=np.float32)
    assert len(set(texts)) > 1
    idx = tmp_path / "ix.ivf"
    cli("index", "build", corpus, "--output", idx, "--type", "sq8", "--nlist", 16)
    out = tmp_path / "cli.parquet"
    cli("index", "search", idx, "--queries", qpath, "-k", 10, "--nprobe", 1, "--corpus", corpus, "--output", out)
    ix = vforge.Index.load(idx, corpus=corpus)
    for threads in (1, 2):
        assert_equal_file(ix.search(qv, 10, 1, filter=texts, threads=threads), out, 10)
    # None leaves a query unfiltered; dicts are filters too
    mixed = [None if i % 3 == 0 else json.loads(f) for i, f in enumerate(texts)]
    h = ix.search(qv, 10, 1, filter=mixed)
    unf = ix.search(qv, 10, 1)
    want = ix.search(qv, 10, 1, filter=texts)
    for i in range(len(texts)):
        assert h.ids[i].tolist() == (unf if i % 3 == 0 else want).ids[i].tolist(), i
    with pytest.raises(vforge.UsageError, match="2 filters for 30 queries"):
        ix.search(qv, 10, 1, filter=texts[:2])
    with pytest.raises(vforge.UsageError, match="rnage"):
        ix.search(qv[:2], 10, 1, filter=[None, '{"must": [{"key": "id", "rnage": {"lt": 3}}]}'])
