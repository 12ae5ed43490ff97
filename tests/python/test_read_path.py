"""read_vectors decodes into one preallocated (n, d) matrix (issue 20 "read path"): a row group
over the reader's slice size (8 MiB, as DuckDB's one-row-group files) is read slice by slice with
the matrix as the decoder's output; the result equals pyarrow's for float32 lists at 1 and 2
threads, element types that need converting (double, float16 FLBA) and nullable columns without
nulls take the converting path, and a null or short vector inside a later slice is named by row."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import vforge

ROWS, DIM = 6000, 512  # 12.3 MB of floats in one row group: two slices of the reader


def pyarrow_matrix(path, column="emb"):
    t = pq.read_table(path, columns=[column])
    return t.column(column).combine_chunks().flatten().to_numpy().reshape(-1, DIM).astype(np.float32)


def write(path, arr, **kw):
    pq.write_table(pa.table({"emb": arr, "n": pa.array(np.arange(len(arr)))}), path,
                   row_group_size=1 << 30, **kw)
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    return str(path)


@pytest.fixture(scope="module")
def values():
    return np.random.default_rng(11).standard_normal((ROWS, DIM)).astype(np.float32)


@pytest.mark.parametrize("compression", ["zstd", "snappy", "none"])
def test_sliced_row_group_equals_pyarrow(tmp_path, values, compression):
    arr = pa.FixedSizeListArray.from_arrays(pa.array(values.ravel()), DIM)
    path = write(tmp_path / "f32.parquet", arr, compression=compression, data_page_size=1 << 20)
    want = pyarrow_matrix(path)
    for threads in (1, 2):
        x = vforge.read_vectors(path, threads=threads)
        assert x.shape == (ROWS, DIM) and x.dtype == np.float32 and x.flags.c_contiguous
        assert np.array_equal(x, want), threads
    # a variable-size list<float> (pyarrow's default for lists) reads the same
    lst = pa.ListArray.from_arrays(pa.array(np.arange(0, ROWS * DIM + 1, DIM, dtype=np.int32)),
                                   pa.array(values.ravel()))
    path2 = write(tmp_path / "list.parquet", lst, compression=compression)
    assert np.array_equal(vforge.read_vectors(path2, threads=1), want)


def test_converted_element_types(tmp_path, values):
    offsets = pa.array(np.arange(0, ROWS * DIM + 1, DIM, dtype=np.int32))
    d = pa.ListArray.from_arrays(offsets, pa.array(values.astype(np.float64).ravel()))
    path = write(tmp_path / "f64.parquet", d, compression="zstd")
    assert np.array_equal(vforge.read_vectors(path, threads=1), values)
    h = pa.ListArray.from_arrays(offsets, pa.array(values.astype(np.float16).ravel()))
    path = write(tmp_path / "f16.parquet", h, compression="zstd")
    assert np.array_equal(vforge.read_vectors(path, threads=2), values.astype(np.float16).astype(np.float32))


def test_null_and_short_vectors_in_a_later_slice_are_named(tmp_path, values):
    rows = [list(map(float, r)) for r in values[:ROWS]]
    bad = ROWS - 7  # inside the second slice
    rows[bad] = None
    path = write(tmp_path / "null.parquet", pa.array(rows, pa.list_(pa.float32())), compression="zstd")
    with pytest.raises(vforge.DataError, match=f"row {bad}: the vector is null"):
        vforge.read_vectors(path, threads=1)
    rows[bad] = list(map(float, values[bad][:-1]))
    path = write(tmp_path / "short.parquet", pa.array(rows, pa.list_(pa.float32())), compression="zstd")
    with pytest.raises(vforge.DataError, match=f"row {bad}"):
        vforge.read_vectors(path, threads=2)
    # a null element inside a vector
    rows[bad] = list(map(float, values[bad]))
    rows[bad][3] = None
    path = write(tmp_path / "elem.parquet", pa.array(rows, pa.list_(pa.float32())), compression="zstd")
    with pytest.raises(vforge.DataError, match=f"row {bad}"):
        vforge.read_vectors(path, threads=1)
