"""vforge.open(): record batches through the Arrow C Data Interface.

- pyarrow imports vforge's buffers without a copy: the address of the dense vectors' float
  buffer in the ArrowArray vforge exported (read through ctypes, before any import) is the
  address pyarrow's RecordBatch and the numpy view of it report;
- the stream equals what pyarrow.parquet reads from the same files (payload values and types),
  also for a file pyarrow writes with every payload type (ints of each width and sign, float16,
  decimals, dates, times, timestamps, binary, lists, nested lists, structs, maps, nulls);
- polars and DuckDB consume it through __arrow_c_stream__; RecordBatchReader._import_from_c too.
"""
import ctypes
import decimal
import datetime
import glob
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vforge

from conftest import SRC


class ArrowSchema(ctypes.Structure):
    pass


class ArrowArray(ctypes.Structure):
    pass


ArrowSchema._fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
                        ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
                        ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
                        ("dictionary", ctypes.POINTER(ArrowSchema)), ("release", ctypes.c_void_p),
                        ("private_data", ctypes.c_void_p)]
ArrowArray._fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                       ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
                       ("buffers", ctypes.POINTER(ctypes.c_void_p)),
                       ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
                       ("dictionary", ctypes.POINTER(ArrowArray)), ("release", ctypes.c_void_p),
                       ("private_data", ctypes.c_void_p)]
GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ArrowArray))


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [("get_schema", GET_SCHEMA), ("get_next", GET_NEXT), ("get_last_error", ctypes.c_void_p),
                ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


EXAMPLES = os.path.join(SRC, "examples", "corpus")


def example_table():
    files = sorted(glob.glob(os.path.join(EXAMPLES, "**", "*.parquet"), recursive=True))
    return pa.concat_tables([pq.read_table(f) for f in files]), files


def test_pyarrow_imports_vforge_buffers_without_a_copy():
    s = vforge.open(EXAMPLES)
    cs = ArrowArrayStream()
    s._export_to_c(ctypes.addressof(cs))
    assert s.closed  # moved out
    sch = ArrowSchema()
    assert cs.get_schema(ctypes.addressof(cs), ctypes.byref(sch)) == 0
    names = [sch.children[i].contents.name.decode() for i in range(sch.n_children)]
    emb = names.index("emb")
    assert sch.children[emb].contents.format == b"+w:32"
    rows = 0
    while True:
        arr = ArrowArray()
        sch2 = ArrowSchema()
        assert cs.get_schema(ctypes.addressof(cs), ctypes.byref(sch2)) == 0
        assert cs.get_next(ctypes.addressof(cs), ctypes.byref(arr)) == 0
        if not arr.release:
            break
        # the float buffer vforge filled, before anyone imported it
        child = arr.children[emb].contents.children[0].contents
        raw_addr = child.buffers[1]
        batch = pa.RecordBatch._import_from_c(ctypes.addressof(arr), ctypes.addressof(sch2))
        col = batch.column("emb")
        assert col.values.buffers()[1].address == raw_addr
        view = col.values.to_numpy(zero_copy_only=True).reshape(-1, 32)
        assert view.__array_interface__["data"][0] == raw_addr
        rows += batch.num_rows
    assert rows == 6000
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(cs.release)(ctypes.addressof(cs))


def test_record_batch_reader_import_from_c_and_capsule():
    s = vforge.open(EXAMPLES, ["id", "emb"], with_id=False, provenance=False)
    cs = ArrowArrayStream()
    s._export_to_c(ctypes.addressof(cs))
    reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(cs))
    t = reader.read_all()
    assert t.column_names == ["id", "emb"]
    assert t.num_rows == 6000
    t2 = pa.RecordBatchReader.from_stream(vforge.open(EXAMPLES, ["id"], with_id=False, provenance=False)).read_all()
    assert t2.column("id").equals(t.column("id"))


def test_stream_equals_pyarrow_parquet():
    want, files = example_table()
    got = vforge.open(EXAMPLES).read_all()
    assert got.num_rows == want.num_rows
    for c in ("id", "text", "meta"):
        assert got.column(c).to_pylist() == want.column(c).to_pylist(), c
        assert got.schema.field(c).type == want.schema.field(c).type
    emb = got.column("emb").combine_chunks()
    assert emb.type == pa.list_(pa.float32(), 32)
    assert np.array_equal(emb.values.to_numpy().reshape(-1, 32),
                          np.array(want.column("emb").to_pylist(), dtype=np.float32))
    # provenance and ids
    keys = got.column("__source_file__").to_pylist()
    assert keys[0] == os.path.abspath(files[0]) and keys[-1] == os.path.abspath(files[1])
    assert got.column("__source_row__").to_pylist() == list(range(3000)) * 2
    ids = got.column("__id__").to_pylist()
    assert len(set(ids)) == 6000 and all(len(i) == 36 for i in ids)


def test_ids_integer_expression_and_columns():
    t = vforge.open(EXAMPLES, ["text"], with_id="id", provenance=False).read_all()
    assert t.column_names == ["__id__", "text"]
    assert t.schema.field("__id__").type == pa.uint64()
    assert t.column("__id__").to_pylist() == pq.read_table(
        sorted(glob.glob(os.path.join(EXAMPLES, "*", "*.parquet")))[0]).column("id").to_pylist() + \
        pq.read_table(sorted(glob.glob(os.path.join(EXAMPLES, "*", "*.parquet")))[1]).column("id").to_pylist()


def every_type_table(n=300):
    rng = np.random.default_rng(5)
    def nul(vals, every):
        return [None if i % every == 0 else v for i, v in enumerate(vals)]
    cols = {
        "i8": pa.array(nul([int(x) for x in rng.integers(-128, 127, n)], 7), pa.int8()),
        "u8": pa.array([int(x) for x in rng.integers(0, 255, n)], pa.uint8()),
        "i16": pa.array([int(x) for x in rng.integers(-30000, 30000, n)], pa.int16()),
        "u16": pa.array(nul([int(x) for x in rng.integers(0, 65535, n)], 5), pa.uint16()),
        "i32": pa.array([int(x) for x in rng.integers(-2**31, 2**31 - 1, n)], pa.int32()),
        "u32": pa.array([int(x) for x in rng.integers(0, 2**32 - 1, n, dtype=np.uint64)], pa.uint32()),
        "i64": pa.array([int(x) for x in rng.integers(-2**62, 2**62, n)], pa.int64()),
        "u64": pa.array([int(x) for x in rng.integers(0, 2**63, n, dtype=np.uint64)], pa.uint64()),
        "f16": pa.array(rng.standard_normal(n).astype(np.float16)),
        "f32": pa.array(nul([float(x) for x in rng.standard_normal(n).astype(np.float32)], 11), pa.float32()),
        "f64": pa.array(rng.standard_normal(n)),
        "b": pa.array(nul([bool(x) for x in rng.integers(0, 2, n)], 3), pa.bool_()),
        "s": pa.array(nul([f"row {i} " + "x" * (i % 17) for i in range(n)], 4)),
        "bin": pa.array([bytes([i % 256, (i * 7) % 256]) for i in range(n)], pa.binary()),
        "fsb": pa.array([bytes([i % 256] * 4) for i in range(n)], pa.binary(4)),
        "d32": pa.array(nul([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(n)], 9)),
        "tms": pa.array([1_600_000_000_000 + i for i in range(n)], pa.timestamp("ms")),
        "tus": pa.array([1_600_000_000_000_000 + i for i in range(n)], pa.timestamp("us", tz="UTC")),
        "tns": pa.array([1_600_000_000_000_000_000 + i for i in range(n)], pa.timestamp("ns")),
        "t32": pa.array([i * 1000 for i in range(n)], pa.time32("ms")),
        "t64": pa.array([i * 1_000_000 for i in range(n)], pa.time64("us")),
        "dec": pa.array(nul([decimal.Decimal(i * 37 - 5000) / 100 for i in range(n)], 6), pa.decimal128(9, 2)),
        "dec18": pa.array([decimal.Decimal(i * 123456789) / 1000 for i in range(n)], pa.decimal128(18, 3)),
        "dec30": pa.array([decimal.Decimal(i) * 10**20 + 7 for i in range(n)], pa.decimal128(30, 0)),
        "li": pa.array(nul([[j for j in range(i % 4)] for i in range(n)], 5), pa.list_(pa.int32())),
        "lli": pa.array([[[f"{i}.{j}.{m}" for m in range(j % 3)] for j in range(i % 3)] for i in range(n)],
                        pa.list_(pa.list_(pa.string()))),
        "st": pa.array(nul([{"a": i, "b": [float(i)] * (i % 3), "c": None if i % 4 == 0 else f"c{i}"}
                            for i in range(n)], 8),
                       pa.struct([("a", pa.int64()), ("b", pa.list_(pa.float32())), ("c", pa.string())])),
        "ls": pa.array([[{"x": j, "y": f"y{j}"} for j in range(i % 3)] for i in range(n)],
                       pa.list_(pa.struct([("x", pa.int16()), ("y", pa.string())]))),
        "m": pa.array(nul([[(f"k{j}", j * i) for j in range(i % 3)] for i in range(n)], 10),
                      pa.map_(pa.string(), pa.int32())),
        "dict": pa.array([["red", "green", "blue"][i % 3] for i in range(n)]).dictionary_encode(),
    }
    return pa.table(cols)


def test_every_payload_type_as_pyarrow_reads_it(tmp_path):
    path = str(tmp_path / "types.parquet")
    pq.write_table(every_type_table(), path, row_group_size=128)
    want = pq.read_table(path)
    got = vforge.open(path, vectors=[], with_id=False, provenance=False).read_all()
    assert got.column_names == want.column_names
    for name in want.column_names:
        w, g = want.column(name), got.column(name)
        if name == "dict":  # pyarrow restores the dictionary from its own metadata; vforge reads the strings
            w = w.cast(pa.string())
        assert g.to_pylist() == w.to_pylist(), name
        if name not in ("m", "dict"):
            assert g.type == w.type, f"{name}: {g.type} != {w.type}"
    assert got.schema.field("i64").nullable
    # skip_bad_rows keeps the payload of the rows it keeps


def test_sparse_and_multivector_config(tmp_path):
    cfg = tmp_path / "sparse.yaml"
    cfg.write_text(
        "vectors:\n"
        "  sp: {type: sparse, column: sp}\n"
        "  mv: {type: multivector, column: mv, distance: dot}\n"
        "datasource:\n"
        f"  uri: {os.path.join(SRC, 'tests', 'data', 'records_vectors.parquet')}\n"
        "  id_expression: id\n"
        "  payload_fields: {ident: id}\n"
        "vectorstore: {type: local, path: x, collection_name: c}\n")
    t = vforge.open(str(cfg), skip_bad_rows=True).read_all()
    assert t.schema.field("sp").type == pa.struct([("indices", pa.list_(pa.uint32())), ("values", pa.list_(pa.float32()))])
    assert t.schema.field("mv").type == pa.list_(pa.list_(pa.float32(), 2))
    assert t.schema.field("mv").metadata[b"vforge.distance"] == b"dot"
    assert t.column_names == ["__id__", "sp", "mv", "ident", "__source_file__", "__source_row__"]
    rows = t.to_pylist()
    assert rows[0]["sp"] == {"indices": [1, 5, 9], "values": [0.5, 1.5, 2.5]}
    assert rows[0]["mv"] == [[1.0, 2.0], [3.0, 4.0]]
    assert all(r["__id__"] == r["ident"] for r in rows)


def test_polars_consumes_the_stream():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(vforge.open(EXAMPLES, ["id", "emb", "text"]))
    assert df.shape == (6000, 6)
    assert df["id"].sum() == sum(example_table()[0].column("id").to_pylist())
    assert df.schema["emb"] == pl.Array(pl.Float32, 32)
    first = example_table()[0].column("emb").to_pylist()[0]
    assert np.allclose(df["emb"][0].to_numpy(), first)


def test_duckdb_consumes_the_stream():
    duckdb = pytest.importorskip("duckdb")
    s = vforge.open(EXAMPLES)  # noqa: F841 (found by DuckDB's replacement scan)
    n, total, dim = duckdb.sql("select count(*), sum(id), min(len(emb)) from s").fetchall()[0]
    assert (n, total, dim) == (6000, sum(example_table()[0].column("id").to_pylist()), 32)


def test_stream_errors_and_single_use():
    with pytest.raises(vforge.NotFoundError) as e:
        vforge.open(os.path.join(SRC, "no", "such", "corpus"))
    assert "no/such/corpus" in str(e.value) and e.value.exit_code == 2
    with pytest.raises(vforge.DataError) as e:
        vforge.open(os.path.join(SRC, "tests", "data", "dim_mismatch.parquet"))
    assert "row 3" in str(e.value) and e.value.status == "corrupt"
    ok = vforge.open(os.path.join(SRC, "tests", "data", "dim_mismatch.parquet"), skip_bad_rows=True).read_all()
    assert ok.column("id").to_pylist() == [0, 1, 2, 4, 5] == ok.column("__source_row__").to_pylist()
    with pytest.raises(vforge.NotFoundError):
        vforge.open(EXAMPLES, ["nope"])
    s = vforge.open(EXAMPLES)
    s.read_all()
    with pytest.raises(vforge.UsageError):
        s.read_all()
    with vforge.open(EXAMPLES) as s2:
        batches = list(s2)
    assert sum(b.num_rows for b in batches) == 6000 and len(batches) == 4
