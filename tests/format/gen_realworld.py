"""gen_realworld.py OUTDIR — parquet files from writers and shapes the reader once refused or
misread (issue 14, "Real-world parquet"), for tests/format/test_realworld.sh.

  fp_*.parquet       fastparquet and pandas engine="fastparquet" (empty lists written as 0x00)
  pg_*.parquet       segmentio/parquet-go shapes, crafted byte by byte (craft_parquet.py): a typed
                     schema root, empty struct groups
  nv_*.parquet       ColumnMetaData.num_values that disagrees with the pages (crafted)
  time_*.parquet     TIME values, in range and outside a day (pyarrow)
  bin_*.parquet      binary without a string annotation (pyarrow; DuckDB for a geometry-like blob)
  var_*.parquet      VARIANT columns written by DuckDB: unshredded, shredded, partially shredded,
                     nested in structs and lists; var_bad_*: variants that cannot be decoded
Prints nothing; exits non-zero if a writer fails.
"""
import os
import struct
import sys

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import fastparquet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import craft_parquet as cp  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


# ---------------------------------------------------------------- fastparquet
df = pd.DataFrame({
    'id': np.arange(12, dtype='int64'),
    'x': np.linspace(-1, 1, 12),
    'f': np.arange(12, dtype='float32') / 4,
    's': ['a', 'bb', None, 'ddd', 'é', '', 'g', None, 'i', 'j', 'k', 'l'],
    'b': [True, False] * 6,
    'n': pd.array([1, None, 3, 4, None, 6, 7, 8, 9, 10, 11, 12], dtype='Int32'),
    'c': pd.Categorical(['u', 'v', 'u', 'w'] * 3),
    't': pd.date_range('2024-01-01', periods=12, freq='37min'),
})
df.to_parquet(path('fp_pandas.parquet'), engine='fastparquet')
fastparquet.write(path('fp_rowgroups_snappy.parquet'), df, row_group_offsets=[0, 5, 9],
                  compression='SNAPPY', write_index=False)
fastparquet.write(path('fp_gzip_stats.parquet'), df[['id', 'x', 's']], compression='GZIP',
                  stats=True, write_index=False)

# ---------------------------------------------------------------- segmentio/parquet-go shapes
ids = cp.column(['id'], cp.INT32, [cp.page([1, 2, 3])])
name = cp.column(['name'], cp.BYTE_ARRAY, [cp.page(['x', None, 'zz'], max_def=1)])
# a typed root: physical type BOOLEAN (0, what a zero-valued Go field writes) besides its children
cp.write_file(path('pg_typed_root.parquet'),
              [cp.root(2, ptype=cp.BOOLEAN), cp.leaf('id', cp.INT32, cp.REQUIRED),
               cp.leaf('name', cp.BYTE_ARRAY, cp.OPTIONAL, cp.STRING)],
              [cp.row_group(3, [ids, name])])
cp.write_file(path('pg_typed_root_int64.parquet'),
              [cp.root(2, ptype=cp.INT64), cp.leaf('id', cp.INT32, cp.REQUIRED),
               cp.leaf('name', cp.BYTE_ARRAY, cp.OPTIONAL, cp.STRING)],
              [cp.row_group(3, [ids, name])])
# empty struct groups: a top-level one (num_children 0), one without num_children at all, and
# one inside a struct next to a real column
sb = cp.column(['s', 'b'], cp.INT64, [cp.page([10, 20, 30])])
cp.write_file(path('pg_empty_struct.parquet'),
              [cp.root(4), cp.leaf('id', cp.INT32, cp.REQUIRED),
               cp.group('empty', cp.OPTIONAL, 0),
               cp.group('s', cp.REQUIRED, 2), cp.group('inner', cp.REQUIRED, 0),
               cp.leaf('b', cp.INT64, cp.REQUIRED),
               cp.group('bare', cp.REQUIRED, 0, write_num_children=False)],
              [cp.row_group(3, [ids, sb])])

# ---------------------------------------------------------------- num_values vs the pages
def two_pages(vals):
    h = len(vals) // 2
    return [cp.page(vals[:h], max_def=1), cp.page(vals[h:], max_def=1)]


v10 = [1, 2, None, 4, 5, 6, None, 8, 9, 10]
ok = cp.column(['ok'], cp.INT32, [cp.page(list(range(10)))])
for tag, nv in (('zero', 0), ('small', 3), ('large', 1000)):
    cp.write_file(path(f'nv_{tag}.parquet'),
                  [cp.root(2), cp.leaf('v', cp.INT64, cp.OPTIONAL), cp.leaf('ok', cp.INT32, cp.REQUIRED)],
                  [cp.row_group(10, [cp.column(['v'], cp.INT64, two_pages(v10), num_values=nv), ok])])
# a list<int32> column (repeated: num_values counts level entries), three pages, records not split
lists = [[1, 2], [], None, [3], [4, 5, 6], [7]]


def list_levels(rows):
    """levels of an optional list of optional elements (max def 3): values, defs, reps"""
    vals, defs, reps = [], [], []
    for r in rows:
        if r is None:
            defs.append(0); reps.append(0)
        elif not r:
            defs.append(1); reps.append(0)
        else:
            for k, x in enumerate(r):
                reps.append(1 if k else 0)
                defs.append(2 if x is None else 3)
                if x is not None:
                    vals.append(x)
    return vals, defs, reps


def list_page(rows):
    vals, defs, reps = list_levels(rows)
    return cp.page(vals, max_def=3, max_rep=1, defs=defs, reps=reps)


lschema = [cp.root(1), cp.group('l', cp.OPTIONAL, 1, cp.LIST), cp.group('list', cp.REPEATED, 1),
           cp.leaf('element', cp.INT32, cp.OPTIONAL)]
lpages = [list_page(lists[:2]), list_page(lists[2:4]), list_page(lists[4:])]
for tag, nv in (('zero', 0), ('small', 2), ('large', 999)):
    cp.write_file(path(f'nv_list_{tag}.parquet'), lschema,
                  [cp.row_group(6, [cp.column(['l', 'list', 'element'], cp.INT32, lpages, num_values=nv)])])

# large enough that --memory-budget 4M reads the row group in slices (the streamed page path)
big = [None if i % 17 == 0 else [(i * 7 + k) % 1001 for k in range(i % 5)] for i in range(60000)]
bpages = [list_page(big[i:i + 5000]) for i in range(0, len(big), 5000)]
bids = [cp.page(list(range(i, i + 5000))) for i in range(0, len(big), 5000)]
for tag, nv in (('zero', 0), ('large', 10**7)):
    cp.write_file(path(f'nv_big_{tag}.parquet'),
                  [cp.root(2)] + lschema[1:] + [cp.leaf('id', cp.INT64, cp.REQUIRED)],
                  [cp.row_group(len(big), [cp.column(['l', 'list', 'element'], cp.INT32, bpages, num_values=nv),
                                           cp.column(['id'], cp.INT64, bids, num_values=nv)])])

# ---------------------------------------------------------------- TIME
day_us = 86400 * 10**6
good = [0, 1, 12 * 3600 * 10**6 + 345, day_us - 1, day_us]
pq.write_table(pa.table({
    'ms': pa.array([v // 1000 for v in good], pa.int32()).view(pa.time32('ms')),
    'us': pa.array(good, pa.int64()).view(pa.time64('us')),
    'ns': pa.array([v * 1000 for v in good], pa.int64()).view(pa.time64('ns')),
}), path('time_in_range.parquet'))
# the bad value in the second row group: the message names the file row (3)
pq.write_table(pa.table({'us': pa.array([5, 6, 7, -1], pa.int64()).view(pa.time64('us'))}),
               path('time_negative.parquet'), row_group_size=2)
pq.write_table(pa.table({'ms': pa.array([-1000], pa.int32()).view(pa.time32('ms'))}),
               path('time_negative_ms.parquet'))
pq.write_table(pa.table({'ns': pa.array([day_us * 1000 + 1], pa.int64()).view(pa.time64('ns'))}),
               path('time_past_midnight.parquet'))

# ---------------------------------------------------------------- binary
raw = [b'\xff\xfe\x00abc', b'plain text', b'', None, bytes(range(256)), '€'.encode()]
vec = [struct.pack('<4f', i, 0.5, -1, 2) for i in range(6)]
wkb_point = b'\x01\x01\x00\x00\x00' + struct.pack('<2d', 1.5, -2.25)
pq.write_table(pa.table({
    'raw': pa.array(raw, pa.binary()),
    'large': pa.array(raw, pa.large_binary()),
    'fixed': pa.array(vec, pa.binary(16)),
    'text': pa.array(['a', 'b', None, 'd', 'e', 'f']),
    'wkb': pa.array([wkb_point] * 6, pa.binary()),
}), path('bin_pyarrow.parquet'))
# text stored without an annotation (Impala, old Hive): --binary-as-string prints it as text
pq.write_table(pa.table({'name': pa.array([b'alpha', b'beta', None, 'gr\xc3\xbc\xc3\x9f'.encode('latin-1')], pa.binary())}),
               path('bin_unannotated_text.parquet'))

# ---------------------------------------------------------------- VARIANT (DuckDB)
con = duckdb.connect()
docs = [
    '{"a": 1, "b": [true, null, "x", 2.5], "c": {"d": "nested", "e": [1, [2, [3]]]}}',
    '[1, -2, 300, -70000, 9007199254740993, -9223372036854775808, 0.125, 1e300]',
    '"short"',
    '"' + 'a long string of more than sixty-four bytes, so not a short string: ' + 'x' * 40 + '"',
    'null', 'true', 'false', '42', '-1.5', '{}', '[]',
    '{"zeta": 1, "alpha": 2, "mid": {"k": "v"}, "arr": [{"p": 1}, {"p": 2, "q": [null]}]}',
    '{"unicode": "h\\u00e9llo \\u2603 \\ud83d\\ude00", "esc": "quote\\" backslash\\\\ tab\\t nl\\n"}',
]
typed = [
    "DATE '2024-02-29'", "DATE '1900-01-01'", "TIMESTAMP '2024-01-02 03:04:05.123456'",
    "TIMESTAMPTZ '2024-01-02 03:04:05.5+00'", "TIMESTAMP_NS '2024-01-02 03:04:05.123456789'",
    "TIME '12:34:56.789'", "12.345::DECIMAL(9,3)", "-123456789012.345::DECIMAL(18,3)",
    "12345678901234567890.12::DECIMAL(38,2)", "uuid '12345678-1234-5678-1234-567812345678'",
    "1.5::FLOAT", "-3::TINYINT", "300::SMALLINT", "-70000::INTEGER", "'x'::VARCHAR",
    "[1, 2, 3]", "{'k': 'v', 'n': 7}",
]
rows = [f"select {i} as id, ('{d.replace(chr(39), chr(39) * 2)}'::JSON)::VARIANT as v" for i, d in enumerate(docs)]
rows += [f"select {len(docs) + i} as id, ({e})::VARIANT as v" for i, e in enumerate(typed)]
rows.append(f"select {len(docs) + len(typed)} as id, NULL::VARIANT as v")
union = ' union all '.join(rows)
con.execute(f"copy (select * from ({union}) order by id) to '{path('var_unshredded.parquet')}' (SHREDDING {{v: 'VARIANT'}})")
con.execute(f"copy (select * from ({union}) order by id) to '{path('var_auto.parquet')}'")
# objects of one shape, so DuckDB shreds them; a few rows break the shape
objs = [f'{{"user": "u{i}", "n": {i}, "tags": ["t{i}", "x"], "geo": {{"lat": {i}.5, "lon": -{i}.25}}}}' for i in range(40)]
objs[3] = '{"user": "u3", "n": "not a number", "tags": [1, null], "extra": {"deep": [true]}}'
objs[7] = '"not an object"'
objs[11] = '{"user": null, "geo": null}'
objs[13] = '{}'
orows = ' union all '.join(f"select {i} as id, ('{o}'::JSON)::VARIANT as v" for i, o in enumerate(objs))
con.execute(f"copy (select * from ({orows}) order by id) to '{path('var_shredded.parquet')}' (ROW_GROUP_SIZE 16)")
con.execute(f"copy (select * from ({orows}) order by id) to '{path('var_partial.parquet')}' "
            "(SHREDDING {v: 'STRUCT(n BIGINT, tags VARCHAR[], geo STRUCT(lat DOUBLE))'})")
# variants inside a struct and a list (DuckDB writes VARIANT only as a top-level column): the
# binaries of var_unshredded.parquet under a crafted schema
vb = [v for v in pq.read_table(path('var_unshredded.parquet')).column('v').to_pylist() if v][:9]
n = 8
# s: optional struct {inner: optional VARIANT, k: int32}; null at row 5, inner null at row 2
s_def = [0 if i == 5 else 1 if i == 2 else 2 for i in range(n)]
s_vals = [vb[i] for i in range(n) if s_def[i] == 2]
k_def = [0 if i == 5 else 1 for i in range(n)]
# l: optional list of optional VARIANT: [] at row 3, null at row 6, [null, v] at row 4
l_rows = [[vb[i], vb[i + 1]] if i not in (3, 4, 6) else [] if i == 3 else None if i == 6 else [None, vb[i]]
          for i in range(n)]
l_vals, l_def, l_rep = list_levels(l_rows)
var_group = lambda nm, rep: [cp.group(nm, rep, 2, cp.VARIANT), cp.leaf('metadata', cp.BYTE_ARRAY, cp.REQUIRED),
                             cp.leaf('value', cp.BYTE_ARRAY, cp.REQUIRED)]
cp.write_file(path('var_nested.parquet'),
              [cp.root(3), cp.leaf('id', cp.INT32, cp.REQUIRED), cp.group('s', cp.OPTIONAL, 2)]
              + var_group('inner', cp.OPTIONAL) + [cp.leaf('k', cp.INT32, cp.REQUIRED),
                                                   cp.group('l', cp.OPTIONAL, 1, cp.LIST),
                                                   cp.group('list', cp.REPEATED, 1)]
              + var_group('element', cp.OPTIONAL),
              [cp.row_group(n, [
                  cp.column(['id'], cp.INT32, [cp.page(list(range(n)))]),
                  cp.column(['s', 'inner', 'metadata'], cp.BYTE_ARRAY,
                            [cp.page([v['metadata'] for v in s_vals], max_def=2, defs=s_def)]),
                  cp.column(['s', 'inner', 'value'], cp.BYTE_ARRAY,
                            [cp.page([v['value'] for v in s_vals], max_def=2, defs=s_def)]),
                  cp.column(['s', 'k'], cp.INT32, [cp.page([i for i in range(n) if k_def[i]], max_def=1, defs=k_def)]),
                  cp.column(['l', 'list', 'element', 'metadata'], cp.BYTE_ARRAY,
                            [cp.page([v['metadata'] for v in l_vals], max_def=3, max_rep=1, defs=l_def, reps=l_rep)]),
                  cp.column(['l', 'list', 'element', 'value'], cp.BYTE_ARRAY,
                            [cp.page([v['value'] for v in l_vals], max_def=3, max_rep=1, defs=l_def, reps=l_rep)]),
              ])])

# variants that cannot be decoded: crafted, unshredded, one value each
def var_file(name, meta, value):
    cp.write_file(path(name),
                  [cp.root(1), cp.group('v', cp.OPTIONAL, 2, cp.VARIANT),
                   cp.leaf('metadata', cp.BYTE_ARRAY, cp.REQUIRED),
                   cp.leaf('value', cp.BYTE_ARRAY, cp.REQUIRED)],
                  [cp.row_group(1, [cp.column(['v', 'metadata'], cp.BYTE_ARRAY, [cp.page([meta], max_def=1)]),
                                    cp.column(['v', 'value'], cp.BYTE_ARRAY, [cp.page([value], max_def=1)])])])


empty_meta = b'\x01\x00\x00'
var_file('var_ok_crafted.parquet', b'\x01\x01\x00\x01k', b'\x02\x01\x00\x00\x02\x0c\x07')  # {"k": 7}
var_file('var_bad_version.parquet', b'\x02\x00\x00', b'\x00')
var_file('var_bad_truncated.parquet', empty_meta, b'\x14\x00\x00')  # int64 with 2 of 8 bytes
var_file('var_bad_field_id.parquet', empty_meta, b'\x02\x01\x05\x00\x01\x00')  # id 5, no names
var_file('var_bad_primitive.parquet', empty_meta, bytes([21 << 2]))  # primitive type 21
var_file('var_bad_offset.parquet', empty_meta, b'\x03\x02\x00\x09\x0a\x00')  # element past the end
