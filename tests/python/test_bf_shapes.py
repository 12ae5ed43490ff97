"""Brute force from NumPy arrays at the edges of its blocking (src/eval/bruteforce.c): fewer rows
than one sgemm tile (2048) and than k, more queries than one query tile (1024, and not a multiple
of it), more rows than the cosine block (16384, the other metrics score one block), and exact ties
that hold more than BF_PEND (512) candidates per query (the pending list is re-scored before it is
full).  Integer-valued vectors make every exact score exact in double, so the oracle is NumPy's
float64 score rounded to float32, ties by the smaller row; 1, 2 and 3 threads must give it."""
import numpy as np
import pytest

import vforge


def oracle(x, q, k, metric):
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    if metric == "dot":
        s = q64 @ x64.T
    elif metric == "cosine":
        qq, xx = (q64 * q64).sum(1), (x64 * x64).sum(1)
        s = (q64 @ x64.T) / (np.sqrt(qq)[:, None] * np.sqrt(xx)[None, :])
    elif metric == "euclid":
        s = -np.sqrt(((q64[:, None, :] - x64[None, :, :]) ** 2).sum(-1))
    else:
        s = -np.abs(q64[:, None, :] - x64[None, :, :]).sum(-1)
    s = s.astype(np.float32)
    rows = np.broadcast_to(np.arange(x.shape[0]), s.shape)
    order = np.lexsort((rows, -s), axis=1)[:, :k]
    return order, np.take_along_axis(s, order, 1)


def check(x, q, k, metric):
    want_ids, want_scores = oracle(x, q, k, metric)
    kk = min(k, x.shape[0])
    for threads in (1, 2, 3):
        h = vforge.brute_force(x, q, k, metric, threads=threads)
        assert np.array_equal(h.ids[:, :kk], want_ids[:, :kk]), (metric, threads)
        assert np.array_equal(h.scores[:, :kk], want_scores[:, :kk]), (metric, threads)
        assert (h.ids[:, kk:] == -1).all()


def ints(rng, shape, spread=3):
    """integer-valued float32 rows, none all zero (the oracle's cosine would divide 0 by 0)"""
    v = rng.integers(-spread, spread + 1, size=shape).astype(np.float32)
    v[~v.any(axis=-1)] = 1
    return v


@pytest.mark.parametrize("metric", ["euclid", "dot", "cosine", "manhattan"])
def test_fewer_rows_than_a_tile_and_than_k(metric):
    rng = np.random.default_rng(11)
    x = ints(rng, (70, 9))
    q = ints(rng, (5, 9)) + 0.5
    check(x, q, 100, metric)


@pytest.mark.parametrize("metric", ["euclid", "cosine"])
def test_more_queries_than_a_query_tile(metric):
    rng = np.random.default_rng(12)
    x = ints(rng, (3000, 6))
    q = ints(rng, (1031, 6)) + 0.25
    check(x, q, 7, metric)


@pytest.mark.parametrize("metric", ["euclid", "cosine", "dot"])
def test_more_rows_than_a_block_with_ties_past_the_pending_list(metric):
    rng = np.random.default_rng(13)
    base = ints(rng, (40, 4), spread=1)
    x = base[rng.integers(0, 40, size=17000)]  # ~425 copies of each: ties far past 512 candidates
    q = ints(rng, (6, 4), spread=2)
    check(x, q, 600, metric)
