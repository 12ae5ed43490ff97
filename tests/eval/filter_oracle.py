#!/usr/bin/env python3
"""Oracle for exact filtered ground truth: `vforge brute-force --filter F` against an independent
DuckDB query (WHERE <the filter in SQL> ORDER BY <the distance> LIMIT k) on a corpus written by
DuckDB with keyword, integer, float, array, JSON-object and null payloads, for every metric and
for filters from 50 % of the rows down to 0.1 % and none.

A query's answer must be the same hits as DuckDB's, in the same order, except where scores tie
within float rounding (DuckDB computes in its own precision): there, ids may swap among the tied
ones and at the cutoff.  The number of hits must be exactly min(k, matching rows).

usage: filter_oracle.py VFORGE TMPDIR
"""
import json
import os
import subprocess
import sys

import duckdb

V, tmp = sys.argv[1], sys.argv[2]
corpus = os.path.join(tmp, "corpus")
os.makedirs(corpus, exist_ok=True)
N_PER_FILE, DIM, K, NQ = 1000, 8, 10, 12

con = duckdb.connect()
for f in range(2):
    path = os.path.join(corpus, f"part-{f}.parquet")
    con.execute(f"""
      copy (select (i + {f * N_PER_FILE})::BIGINT as row_no,
          [ (sin(i * 1.7 + {f}) )::FLOAT, cos(i * 0.3)::FLOAT, sin(i * 0.11 + 2)::FLOAT, cos(i * 1.3 + {f})::FLOAT,
            sin(i * 0.7)::FLOAT, cos(i * 2.1)::FLOAT, sin(i * 0.05 + 1)::FLOAT, ((i % 17) / 17.0 - 0.5)::FLOAT ]::FLOAT[] as emb,
          case when i % 10 = 9 then null else 'c' || ((i * 7 + {f}) % 9) end as kw,
          case when i % 13 = 0 then null else ((i + {f * N_PER_FILE}) % 1000)::BIGINT end as n,
          ((i * 37 + {f * 11}) % 1000 / 1000.0)::DOUBLE as x,
          case when i % 4 = 0 then ['t' || (i % 5), 'all'] when i % 4 = 1 then []::VARCHAR[] else ['t' || (i % 3)] end as tags,
          case when i % 3 = 0 then '{{"lang":"en","score":' || (i % 10) || '}}' else '{{"lang":"de"}}' end as meta
        from range({N_PER_FILE}) t(i)) to '{path}' (format parquet, row_group_size 300)""")

# the filters, in Qdrant's form and as SQL over the columns (NULL payload values are absent keys)
FILTERS = [
    # ~50 %
    ({"must": [{"key": "n", "range": {"lt": 500}}]}, "n < 500"),
    ({"should": [{"key": "kw", "match": {"any": ["c1", "c2", "c3", "c4"]}}, {"key": "tags", "match": {"value": "all"}}]},
     "kw in ('c1','c2','c3','c4') or list_contains(tags, 'all')"),
    # ~10 %
    ({"must": [{"key": "kw", "match": {"value": "c3"}}]}, "kw = 'c3'"),
    ({"must": [{"key": "x", "range": {"gte": 0.25, "lt": 0.35}}], "must_not": [{"is_empty": {"key": "kw"}}]},
     "x >= 0.25 and x < 0.35 and kw is not null"),
    ({"must": [{"is_empty": {"key": "kw"}}]}, "kw is null"),
    ({"must": [{"key": "meta.lang", "match": {"value": "en"}}, {"key": "meta.score", "range": {"gte": 7}}]},
     "json_extract_string(meta, '$.lang') = 'en' and cast(json_extract(meta, '$.score') as int) >= 7"),
    # ~1 %
    ({"must": [{"key": "n", "range": {"lt": 10}}]}, "n < 10"),
    ({"must": [{"key": "tags", "match": {"value": "t4"}}, {"key": "kw", "match": {"except": ["c0", "c1", "c2"]}}, {"key": "x", "range": {"lt": 0.2}}]},
     "list_contains(tags, 't4') and kw is not null and kw not in ('c0','c1','c2') and x < 0.2"),
    ({"must": [{"key": "tags", "values_count": {"gte": 2}}, {"key": "n", "range": {"gte": 900}}]},
     "len(tags) >= 2 and n >= 900"),
    # 0.1 %
    ({"must": [{"key": "n", "match": {"value": 7}}]}, "n = 7"),
    ({"must": [{"has_id": []}]}, "false"),
    # no match
    ({"must": [{"key": "kw", "match": {"value": "nope"}}]}, "kw = 'nope'"),
    ({"must": [{"key": "n", "range": {"gt": 5000}}]}, "n > 5000"),
]

METRICS = {
    # DuckDB score, larger = nearer, as vforge scores
    "cosine": "list_cosine_similarity(c.emb, q.emb)",
    "dot": "list_inner_product(c.emb, q.emb)",
    "euclid": "-list_distance(c.emb, q.emb)",
    "manhattan": "-list_reduce(list_transform(list_zip(c.emb, q.emb), lambda z: abs(z[1] - z[2])), lambda a, b: a + b)",
}


def run(*args):
    r = subprocess.run([V, "--quiet", *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        sys.exit(f"FAIL: vforge {' '.join(args)} -> {r.returncode}")
    return r


run("generate-queries", corpus, "-n", str(NQ), "--seed", "5")
qfile = os.path.join(corpus, "eval", f"queries_{NQ}.parquet")
# point ids: md5(bare key ":" physical row) as a UUID (the absolute path is the key)
con.execute(f"""create table c as select emb, kw, n, x, tags, meta,
    regexp_replace(md5(filename || ':' || file_row_number::VARCHAR),
                   '^(.{{8}})(.{{4}})(.{{4}})(.{{4}})(.{{12}})$', '\\1-\\2-\\3-\\4-\\5') as id
    from read_parquet('{corpus}/part-*.parquet', filename = true, file_row_number = true)""")
con.execute(f"create table q as select query_id, emb from read_parquet('{qfile}')")
total = con.execute("select count(*) from c").fetchone()[0]
fails = checked = 0
for metric, score in METRICS.items():
    for fi, (flt, sql) in enumerate(FILTERS):
        text = json.dumps(flt)
        out = os.path.join(tmp, f"bf_{metric}_{fi}.parquet")
        run("brute-force", corpus, "--queries", qfile, "-k", str(K), "--metric", metric, "--filter", text, "--output", out)
        matching = con.execute(f"select count(*) from c where {sql}").fetchone()[0]
        got = {r[0]: (r[1], r[2]) for r in con.execute(f"select query_id, hit_ids, hit_scores from read_parquet('{out}')").fetchall()}
        want = {}
        for qid, ids, scores in con.execute(f"""
            select query_id, list(id order by s desc, id), list(s order by s desc, id) from (
              select q.query_id, c.id, {score} as s, row_number() over (partition by q.query_id order by {score} desc, c.id) as r
              from q, c where {sql}) where r <= {K} group by query_id""").fetchall():
            want[qid] = (ids, scores)
        for qid in con.execute("select query_id from q").fetchall():
            qid = qid[0]
            g_ids, g_sc = got.get(qid, ([], []))
            w_ids, w_sc = want.get(qid, ([], []))
            checked += 1
            what = f"{metric} filter {fi} ({sql}, {matching} of {total} rows) query {qid}"
            if len(g_ids) != min(K, matching) or len(w_ids) != len(g_ids):
                print(f"FAIL: {what}: {len(g_ids)} hits, DuckDB {len(w_ids)}, want {min(K, matching)}")
                fails += 1
                continue
            ok = True
            for j, (a, b) in enumerate(zip(g_ids, w_ids)):
                tol = 1e-5 * max(1.0, abs(w_sc[j]))
                if abs(g_sc[j] - w_sc[j]) > tol:
                    ok = False
                if a != b:  # a tie: the two scores equal within rounding, or at the cutoff
                    tied = [w_ids[i] for i in range(len(w_ids)) if abs(w_sc[i] - w_sc[j]) <= tol]
                    if a not in tied and not abs(g_sc[j] - w_sc[-1]) <= tol:
                        ok = False
            if not ok:
                print(f"FAIL: {what}:\n  vforge {list(zip(g_ids, g_sc))}\n  duckdb {list(zip(w_ids, w_sc))}")
                fails += 1
        print(f"ok: {metric} filter {fi}: {matching} of {total} rows match ({100.0 * matching / total:.2f} %)")
print(f"filter oracle: {checked} query answers compared, {fails} failures")
sys.exit(1 if fails else 0)
