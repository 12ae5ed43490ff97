"""vforge from Python: zero-copy record batches, exact ground truth and IVF indexes.

A front end over libvforge (the C library the ``vforge`` command is built on): every function
here converts its arguments and calls one library entry point, with the GIL released, so the
results are the command line's, byte for byte.

- :func:`open` streams a corpus (a parquet URI — local, ``s3://``, ``hf://``, ``http(s)://`` — a
  YAML load config or a vector file) as Arrow record batches that pyarrow, polars and DuckDB
  import without a copy (the Arrow C Data Interface, ``__arrow_c_stream__``).
- :func:`read_vectors` returns the dense vectors as one ``(n, d)`` float32 NumPy array.
- :func:`brute_force` computes exact top-k (ground truth), :func:`generate_queries` samples
  queries, :func:`recall` scores answers against ground truth.
- :class:`Index` builds, saves, loads and searches IVF indexes (flat, sq8, pq, rabitq).
- :func:`load` streams a corpus into a vector store, :func:`bench` measures a store.

Every call takes ``threads=`` (the CLI's ``--threads``: an integer in 1..4096, default the CPUs
this process may use; anything else raises :class:`UsageError`).  Results never depend on it.
:func:`recall`, :meth:`Index.load` and :meth:`Index.save` have no parallel work: they accept and
check it and run on the calling thread.
Errors raise :class:`Error` subclasses carrying vforge's message; Ctrl-C interrupts a long call
through the library's cancellation flag and raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import builtins as _builtins
import json as _json
import numbers as _numbers
import os as _os
import shutil as _shutil
import tempfile as _tempfile
from typing import Any, Callable, Iterator, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _vforge
from ._vforge import (  # noqa: F401  (re-exported)
    DataError,
    Error,
    IOError,
    NotFoundError,
    ResourceError,
    UsageError,
)

__version__: str = _vforge.version()

__all__ = [
    "Error", "UsageError", "DataError", "NotFoundError", "IOError", "ResourceError",
    "Stream", "Hits", "Index", "open", "read_vectors", "brute_force", "generate_queries",
    "recall", "load", "bench", "__version__",
]

ArrayLike = Any  # anything numpy.asarray accepts
PathOrArray = Union[str, "os.PathLike[str]", ArrayLike]


def _path(p: Any) -> str:
    return _os.fspath(p)


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, _os.PathLike))


_MAX_THREADS = 4096  # the CLI's --threads range, 1..4096


def _threads(threads: Optional[int]) -> int:
    """``threads=`` of every call, checked as the CLI checks ``--threads``: None (0 here: the
    library's default, the CPUs this process may use) or an integer in 1..4096."""
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, _numbers.Integral):
        raise UsageError(f"threads must be an integer in 1..{_MAX_THREADS}, got {threads!r}")
    if not 1 <= int(threads) <= _MAX_THREADS:
        raise UsageError(f"threads must be an integer in 1..{_MAX_THREADS}, got {int(threads)}")
    return int(threads)


def _matrix(x: ArrayLike, what: str) -> _np.ndarray:
    a = _np.ascontiguousarray(x, dtype=_np.float32)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2 or a.shape[1] < 1:
        raise UsageError(f"{what}: expected a 2-D array (n, d), got shape {a.shape}")
    return a


class Hits(tuple):
    """``(ids, scores)`` of a search, each of shape ``(n_queries, k)``, best first.

    ``ids`` is an int64 array (``-1`` where a query has fewer than k hits) when the corpus has
    integer point ids (a NumPy array, a vector file, ``id_expression: row``), else an object array
    of ``str`` (``None`` where missing); ``scores`` is float32 (NaN where missing), larger =
    nearer (cosine similarity, dot, -L2, -L1).  ``path`` is the file written, if any.
    """

    path: Optional[str]

    def __new__(cls, ids: _np.ndarray, scores: _np.ndarray, path: Optional[str] = None) -> "Hits":
        t = super().__new__(cls, (ids, scores))
        t.path = path
        return t

    @property
    def ids(self) -> _np.ndarray:
        return self[0]

    @property
    def scores(self) -> _np.ndarray:
        return self[1]


def _hits(raw: Tuple[Any, Any, bool], nq: int, k: int, path: Optional[str] = None) -> Hits:
    ids, scores, ints = raw
    if ints:
        ida = _np.frombuffer(ids, dtype=_np.int64).reshape(nq, k)
    else:
        ida = _np.empty(nq * k, dtype=object)
        ida[:] = ids
        ida = ida.reshape(nq, k)
    return Hits(ida, _np.frombuffer(scores, dtype=_np.float32).reshape(nq, k), path)


FilterLike = Union[str, dict, list]


def _filter_text(f: Optional[FilterLike], what: str = "filter") -> Optional[str]:
    """The JSON text of a filter argument, as the CLI's ``--filter JSON|@FILE`` takes it: a
    ``str`` is used as it is (``"@path"``: that file's bytes), a ``dict`` (or list) is serialised
    with ``json.dumps(f, separators=(",", ":"))`` — the text whose md5 names filtered outputs."""
    if f is None:
        return None
    if isinstance(f, (dict, list)):
        return _json.dumps(f, separators=(",", ":"), ensure_ascii=False)
    if isinstance(f, bytes):
        f = f.decode("utf-8")
    if not isinstance(f, str):
        raise UsageError(f"{what}: expected a filter's JSON text, '@FILE' or a dict, got {type(f).__name__}")
    if f.startswith("@"):
        try:
            with _builtins.open(f[1:], "rb") as fp:
                data = fp.read(_FILTER_MAX_TEXT + 1)
        except OSError as e:
            raise UsageError(f"{what} @{f[1:]}: cannot open: {e.strerror}") from None
        if len(data) > _FILTER_MAX_TEXT:
            raise UsageError(f"{what} @{f[1:]}: more than {_FILTER_MAX_TEXT} bytes")
        return data.decode("utf-8")
    if len(f.encode("utf-8")) > _FILTER_MAX_TEXT:
        raise UsageError(f"{what}: more than {_FILTER_MAX_TEXT} bytes")
    return f


_FILTER_MAX_TEXT = 16 << 20  # FLT_MAX_TEXT (include/vforge/filter.h)


# ------------------------------------------------------------------ streams


class Stream:
    """Record batches of a corpus, one per row group, through the Arrow C stream interface.

    Consume it once: pass it to ``pyarrow.RecordBatchReader.from_stream``, ``polars.DataFrame``,
    ``duckdb.sql("select ... from stream")`` (all read ``__arrow_c_stream__``), or iterate it
    (pyarrow ``RecordBatch`` objects; Ctrl-C interrupts between row groups).  Columns:
    ``__id__`` (utf8 UUID, or uint64 for integer ids), the vectors (dense:
    ``fixed_size_list<float32>[d]`` over one contiguous buffer — ``batch.column("emb").values
    .to_numpy().reshape(-1, d)`` is a view; sparse: ``struct<indices: list<uint32>, values:
    list<float>>``; multivector: ``list<fixed_size_list<float32>[d]>``), the payload columns in
    their parquet types, ``__source_file__`` and ``__source_row__``.
    """

    def __init__(self, raw: "_vforge.Stream") -> None:
        self._raw = raw

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream protocol (moves the stream into the capsule)."""
        return self._raw.__arrow_c_stream__(requested_schema)

    def _export_to_c(self, address: int) -> None:
        """Move the stream into the ``struct ArrowArrayStream`` at ``address``
        (``pyarrow.RecordBatchReader._import_from_c``)."""
        self._raw._export_to_c(address)

    @property
    def schema(self) -> Any:
        """The batches' ``pyarrow.Schema`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.Schema._import_from_c_capsule(self._raw.schema_capsule())

    def __iter__(self) -> Iterator[Any]:
        import pyarrow as pa

        while True:
            caps = self._raw.next_capsules()
            if caps is None:
                return
            yield pa.RecordBatch._import_from_c_capsule(*caps)

    def to_pyarrow(self) -> Any:
        """A ``pyarrow.RecordBatchReader`` over the stream (no copy)."""
        import pyarrow as pa

        return pa.RecordBatchReader._import_from_c_capsule(self.__arrow_c_stream__())

    def read_all(self) -> Any:
        """Every batch as one ``pyarrow.Table`` (the batches' buffers, not copies; Ctrl-C
        interrupts between row groups)."""
        import pyarrow as pa

        schema = self.schema
        return pa.Table.from_batches(list(self), schema=schema)

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open(source: Union[str, "os.PathLike[str]"], columns: Optional[Sequence[str]] = None, *,
         vectors: Optional[Sequence[str]] = None, with_id: Union[bool, str] = True,
         provenance: bool = True, skip_bad_rows: bool = False, id_root: Optional[str] = None,
         threads: Optional[int] = None) -> Stream:
    """Stream a corpus as Arrow record batches (see :class:`Stream`).

    ``source`` is a parquet file or directory (local, ``s3://``, ``hf://``, ``http(s)://``; every
    ``*.parquet`` below it outside ``eval/``, as the CLI's ``URI``), a YAML load config (its
    datasource — component datasets included — its ``vectors:`` and ``payload_fields``) or a
    vector file (``.npy``, ``.fbin``, ``.hdf5``).  ``columns`` selects top-level columns (a
    config: vector names and payload keys).  For a parquet URI, ``vectors`` names the columns
    read as vectors; by default every column with a dense (``list<float>``, FLBA) or sparse
    (``struct{indices, values}``) vector shape is.  ``with_id``: ``True`` (the config's
    ``id_expression``, else ``vf_point_id(filename, file_row_number)``), an id expression, or
    ``False``.  Vectors are checked as ``vforge load`` checks them: a bad row raises
    :class:`DataError` naming file and row, or is dropped with ``skip_bad_rows=True``.  The first
    batch is read now, so a bad source fails here.  ``threads``: batches are decoded one row
    group at a time on the thread that pulls them (no parallel decode); it is checked and set as
    the library's thread count while a batch is read.
    """
    idexpr = with_id if isinstance(with_id, str) else None
    t = _threads(threads)
    raw = _vforge.open_stream(_path(source), list(columns) if columns is not None else None,
                              list(vectors) if vectors is not None else None, bool(with_id),
                              idexpr, bool(provenance), bool(skip_bad_rows), id_root, t)
    return Stream(raw)


def read_vectors(source: Union[str, "os.PathLike[str]"], column: Optional[str] = None, *,
                 id_root: Optional[str] = None, threads: Optional[int] = None) -> _np.ndarray:
    """The dense vectors of a corpus as one ``(n, d)`` float32 array, in corpus order.

    ``source`` as in :func:`open`; ``column`` names the dense vector column (a config: the
    ``vectors:`` entry) when there are several.  A parquet corpus is decoded row group by row
    group straight into the array by ``threads`` workers (float16/double converted to float32);
    the array owns vforge's buffer (no copy).
    """
    buf, n, d = _vforge.read_vectors(_path(source), column, id_root, _threads(threads))
    return _np.frombuffer(buf, dtype=_np.float32).reshape(n, d)


def brute_force(corpus: PathOrArray, queries: PathOrArray, k: int, metric: Optional[str] = None,
                filter: Optional[FilterLike] = None, *, column: Optional[str] = None,
                output: Union[None, bool, str] = None, id_root: Optional[str] = None,
                threads: Optional[int] = None) -> Hits:
    """Exact top-``k`` of every query: the ground truth of ``vforge brute-force``.

    ``corpus``: a corpus as in :func:`open`, or an ``(n, d)`` array (ids are row numbers).
    ``queries``: a queries file (``generate_queries``' parquet, ``.npy``, ``.fbin``, an
    ann-benchmarks ``.hdf5``'s ``test``) or an ``(nq, d)`` array (query i has id ``"i"``).
    ``metric``: cosine, dot, euclid or manhattan (default: a config's distance, else cosine).
    Every score is re-computed by one fixed-order kernel, so the result does not depend on
    ``threads``.  ``output=True`` also writes the CLI's file
    (``<prefix>/eval/brute_force_queries_<N>_k<K>.parquet``), ``output="f.parquet"`` that file —
    byte-identical to the CLI's for the same inputs; an array corpus writes no file.
    ``filter``: a Qdrant filter over the corpus's payload for every query, as ``brute-force
    --filter`` (JSON text, ``"@FILE"``, or a dict, see README "Filtered search"): rows that do not
    match are never hits, so a query may get fewer than ``k`` (padded with ``-1``/``None`` and
    NaN); the file written is ``..._f<h>_k<K>.parquet``.  A queries file with a ``__filter__``
    column is filtered per query without it (giving both is a :class:`UsageError`).
    Returns :class:`Hits`.
    """
    t = _threads(threads)
    ftext = _filter_text(filter)
    if not _is_path(corpus):
        if ftext is not None:
            raise UsageError("brute_force: an array corpus has no payload to filter (filter=)")
        x = _matrix(corpus, "corpus")
        if _is_path(queries):
            raise UsageError("brute_force: an array corpus takes an array of queries")
        q = _matrix(queries, "queries")
        if q.shape[1] != x.shape[1]:
            raise UsageError(f"brute_force: queries have dimension {q.shape[1]}, the corpus {x.shape[1]}")
        if output is not None:
            raise UsageError("brute_force: an array corpus writes no file (output=)")
        ids, scores = _vforge.brute_force_matrix(x, x.shape[0], q, q.shape[0], x.shape[1], int(k),
                                                 metric or "cosine", t)
        nq = q.shape[0]
        return Hits(_np.frombuffer(ids, dtype=_np.int64).reshape(nq, k),
                    _np.frombuffer(scores, dtype=_np.float32).reshape(nq, k))
    qpath, qv, nq, qd = None, None, 0, 0
    if _is_path(queries):
        qpath = _path(queries)
    else:
        qv = _matrix(queries, "queries")
        nq, qd = qv.shape
    write = output is not None and output is not False
    out = output if isinstance(output, (str, _os.PathLike)) else None
    raw, n_queries, _rows, _skipped, path = _vforge.brute_force(
        _path(corpus), int(k), qpath, qv, nq, qd, metric, column,
        _path(out) if out is not None else None, write, id_root, t, ftext)
    return _hits(raw, n_queries, int(k), path)


def generate_queries(corpus: Union[str, "os.PathLike[str]"], n: int, *, seed: int = 42,
                     columns: Optional[Sequence[str]] = None, column: Optional[str] = None,
                     output: Optional[str] = None, filter_template: Optional[FilterLike] = None,
                     id_root: Optional[str] = None, threads: Optional[int] = None) -> str:
    """Sample ``n`` rows uniformly over the corpus (seeded: the same seed, the same file) and
    write them as a queries file, as ``vforge generate-queries``; returns its path (default
    ``<prefix>/eval/queries_<n>.parquet``).  ``columns``: payload columns to copy (parquet
    corpora); ``column``: the vector column when there are several.  ``filter_template``
    (``--filter-template``; text, ``"@FILE"`` or a dict): a ``__filter__`` column, one filter per
    query, ``"$key"`` the query row's own payload value, ``"$~key"`` a value drawn from the corpus
    (default file ``queries_<n>_f<h>.parquet``).  ``threads`` is checked; the sample is read on
    the calling thread (no parallel work)."""
    r = _vforge.generate_queries(_path(corpus), int(n), int(seed),
                                 list(columns) if columns is not None else None, column,
                                 _path(output) if output is not None else None, id_root,
                                 _threads(threads), _filter_text(filter_template, "filter_template"))
    return r["path"]


def _id_rows(ids: Any) -> list:
    """rows of id strings (None where missing) from an ids array or list of lists"""
    if isinstance(ids, _np.ndarray):
        if ids.dtype.kind in "iu":
            return [[str(v) if v >= 0 else None for v in row] for row in ids.reshape(len(ids), -1)]
        return [[None if v is None else str(v) for v in row] for row in ids.reshape(len(ids), -1)]
    return [[None if v is None else str(v) for v in row] for row in ids]


def recall(hits: Any, truth: Any, k: int, *, ties: bool = False, threads: Optional[int] = None) -> float:
    """Mean recall@``k`` of ``hits`` against ``truth``, as ``vforge bench`` counts it.

    ``hits``: a :class:`Hits` (``(ids, scores)``), an ids array of shape ``(nq, >=k)``, or a list
    of id lists; row i answers query i.  ``truth``: a ground-truth file
    (``brute_force_queries_<N>_k<K>.parquet``, rows in query order) or the :class:`Hits` of
    :func:`brute_force`.  ``ties=True`` also counts a returned id whose score equals the truth's
    k-th within 1e-6 relative (``recall_max``; needs the hits' scores).  A filtered truth
    (``brute_force(..., filter=)``) is scored as bench scores it: a query's recall is over
    min(k, its true hits), and queries with no true hit are left out of the mean (0.0 when no
    query has one).  ``threads`` is accepted and checked; the scoring runs on the calling thread.
    """
    _threads(threads)
    hscores = None
    if isinstance(hits, tuple) and len(hits) == 2:
        hids, hscores = hits
        hscores = [[float(s) for s in row] for row in _np.asarray(hscores)]
    else:
        hids = hits
    rows = _id_rows(hids)
    if _is_path(truth):
        r, rmax = _vforge.recall(rows, int(k), _path(truth), None, None, hscores)
    else:
        tids, tsc = truth
        r, rmax = _vforge.recall(rows, int(k), None, _id_rows(tids),
                                 [[float(s) for s in row] for row in _np.asarray(tsc)], hscores)
    return rmax if ties else r


# ------------------------------------------------------------------ indexes


class Index:
    """An IVF index file (``vforge index build`` / ``search`` / ``info``), opened with mmap.

    Build one with :meth:`Index.build` (from a corpus or an ``(n, d)`` array), open a file with
    :meth:`Index.load`, keep it with :meth:`save`.  An index built without ``path=`` lives in a
    temporary file that is deleted when the object is closed or collected.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], *, corpus: Optional[str] = None,
                 id_root: Optional[str] = None, _temp_dir: Optional[str] = None,
                 _report: Optional[dict] = None) -> None:
        self.path = _path(path)
        self._file = _vforge.IndexFile(self.path)
        self._temp_dir = _temp_dir
        self.report: Optional[dict] = _report
        #: the corpus (URI or load config) whose payload a filtered :meth:`search` reads
        self.corpus: Optional[str] = _path(corpus) if corpus is not None else None
        self._id_root = id_root

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], *, corpus: Optional[str] = None,
             id_root: Optional[str] = None, threads: Optional[int] = None) -> "Index":
        """Open an index file (every section bound and the checksum are checked; the file is
        mapped, not read, so ``threads`` — accepted and checked like every call's — has no
        parallel work here).  ``corpus``: the corpus the index was built from, whose payload a
        filtered :meth:`search` reads (as ``index search --corpus``)."""
        _threads(threads)
        return cls(path, corpus=corpus, id_root=id_root)

    @classmethod
    def build(cls, source: PathOrArray, *, type: str = "sq8", nlist: Optional[int] = None,
              metric: Optional[str] = None, pq_m: Optional[int] = None,
              pq_nbits: Optional[int] = None,
              rabitq_bits: Optional[int] = None, rerank: Optional[int] = None, seed: int = 1234,
              max_train: Optional[int] = None, column: Optional[str] = None,
              id_expression: Optional[str] = None, id_root: Optional[str] = None,
              path: Optional[str] = None, spill_dir: Optional[str] = None,
              threads: Optional[int] = None) -> "Index":
        """Build an index as ``vforge index build`` does and open it.

        ``source``: a corpus as in :func:`open` (its dense vector, ``column`` among several;
        point ids from ``id_expression`` or the config) or an ``(n, d)`` array (ids are row
        numbers).  ``type``: flat, sq8, pq or rabitq; ``nlist`` default about 4·sqrt(rows);
        ``pq_nbits``: 8 (default) or 4 (fast-scan PQ; pair with ``rerank``);
        ``metric``: cosine (default; a config: its distance), dot or euclid.  The same rows,
        parameters and seed give a byte-identical file whatever ``threads``.  ``report`` holds
        the build report (the ``--json`` keys).
        """
        tmp = None
        if path is None:
            tmp = _tempfile.mkdtemp(prefix="vforge-index-")
            out = _os.path.join(tmp, "index.ivf")
        else:
            out = _path(path)
        kw = dict(nlist=int(nlist or 0), metric=metric, pq_m=int(pq_m or 0), pq_nbits=int(pq_nbits or 0),
                  rabitq_bits=int(rabitq_bits or 0), rerank=int(rerank or 0), seed=int(seed),
                  max_train=int(max_train or 0), column=column, id_expression=id_expression,
                  id_root=id_root, spill_dir=spill_dir if spill_dir is not None else tmp,
                  threads=_threads(threads))
        try:
            if _is_path(source):
                rep = _vforge.index_build(_path(source), out, type, **kw)
                corpus = _path(source)
            else:
                x = _matrix(source, "vectors")
                rep = _vforge.index_build(x, out, type, n=x.shape[0], dim=x.shape[1], **kw)
                corpus = None
            return cls(out, corpus=corpus, id_root=id_root, _temp_dir=tmp, _report=_json.loads(rep))
        except BaseException:
            if tmp:
                _shutil.rmtree(tmp, ignore_errors=True)
            raise

    def search(self, queries: ArrayLike, k: int, nprobe: int = 1,
               filter: Union[None, FilterLike, Sequence[Optional[FilterLike]]] = None, *,
               corpus: Optional[str] = None, rerank: Optional[int] = None,
               threads: Optional[int] = None) -> Hits:
        """The ``k`` best hits of each query (an ``(nq, d)`` array), scanning ``nprobe`` lists;
        scores as :func:`brute_force`'s; ``rerank`` overrides the file's re-rank factor (a 4-bit
        PQ index without stored vectors re-scores ``rerank * k`` candidates by float ADC).
        ``threads``: queries are searched in parallel (the result does not depend on it).

        ``filter``: a Qdrant filter for every query (JSON text, ``"@FILE"`` or a dict), as
        ``vforge index search --filter ... --corpus ...``, or a list of one filter per query
        (``None``: that query unfiltered), as a queries file's ``__filter__`` column; it reads
        the payload of ``corpus``
        (default: the corpus :meth:`build` read, or :meth:`load`'s ``corpus=``), matched to the
        index rows by point id; it is applied inside the list scan and ``nprobe`` widens until
        ``k`` matching hits are found or every list was scanned, so a query gets fewer than
        ``k`` hits (``-1``/``None`` and NaN padding) only when fewer rows match.  Index rows
        whose ids are not in the corpus never match (a warning on the ``vforge`` logger).  The
        corpus's payload is read on every filtered call.  Returns :class:`Hits`."""
        q = _matrix(queries, "queries")
        if int(k) < 1 or int(nprobe) < 1:
            raise UsageError(f"Index.search: k and nprobe must be at least 1 (got k={k}, nprobe={nprobe})")
        ftext, per_query = None, None
        if isinstance(filter, (list, tuple)):
            if len(filter) != q.shape[0]:
                raise UsageError(f"Index.search: {len(filter)} filters for {q.shape[0]} queries "
                                 "(one per query, None: unfiltered)")
            per_query = [_filter_text(f, f"filter {i}") for i, f in enumerate(filter)]
        else:
            ftext = _filter_text(filter)
        src = _path(corpus) if corpus is not None else self.corpus
        if (ftext is not None or per_query is not None) and src is None:
            raise UsageError("Index.search: a filter reads the payload of the corpus the index was built "
                             "from; give corpus= (an index built from an array has none)")
        raw = self._file.search(q, q.shape[0], q.shape[1], int(k), int(nprobe), int(rerank or 0),
                                _threads(threads), ftext, src, self._id_root, per_query)
        return _hits(raw, q.shape[0], int(k))

    def save(self, path: Union[str, "os.PathLike[str]"], *, threads: Optional[int] = None) -> str:
        """Copy the index file to ``path`` (written to a temporary name, then renamed); a file
        copy, so ``threads`` is accepted and checked but has no parallel work."""
        _threads(threads)
        dst = _path(path)
        tmp = dst + ".tmp.%d" % _os.getpid()
        _shutil.copyfile(self.path, tmp)
        _os.replace(tmp, dst)
        return dst

    @property
    def info(self) -> dict:
        """``vforge index info --json``: type, metric, dim, nlist, rows, list sizes, ..."""
        return self._file.info()

    def __len__(self) -> int:
        return int(self.info["rows"])

    def close(self) -> None:
        self._file.close()
        if self._temp_dir:
            _shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        i = self.info
        return f"Index({self.path!r}, type={i['type']}, metric={i['metric']}, dim={i['dim']}, rows={i['rows']})"


# ---------------------------------------------------------- load and bench


def load(config: Union[str, "os.PathLike[str]"], resume: bool = False, *, step: str = "run",
         offset: int = 0, limit: Optional[int] = None, skip_bad_rows: Optional[bool] = None,
         store: Optional[str] = None, num_jobs: int = 1, job_rank: int = 0,
         progress: Optional[Callable[[dict], Any]] = None, threads: Optional[int] = None) -> dict:
    """Load a corpus into its vector store as ``vforge load run CONFIG`` does (``step``:
    run, prepare, load, finalize); ``resume=True`` continues from the checkpoint, as
    ``--resume``.  ``progress`` is called with ``{phase, stage, unit, rows_done, rows_total,
    detail, fraction, ...}`` events — the load, then finalize's stages (compaction, index
    training: ``stage`` "k-means", ``unit`` "iterations") — (an exception it raises stops the load
    and is raised here).  Returns the ``--json`` report:
    ``{points, files, bytes_read, seconds, points_per_s, finalize_seconds, retries,
    skipped_rows}``.  ``threads``: finalize's index training (k-means) and scoring; the upload
    runs the config's ``loader.concurrency`` workers whatever ``threads``."""
    skip = -1 if skip_bad_rows is None else int(bool(skip_bad_rows))
    js, _verified, _stored, _expected = _vforge.load(
        _path(config), step, bool(resume), int(offset), int(limit or 0), skip, store,
        int(num_jobs), int(job_rank), progress, _threads(threads))
    return _json.loads(js)


def _knob_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def bench(config: Optional[Union[str, "os.PathLike[str]"]] = None, *, queries: str,
          ground_truth: Optional[str] = None, k: int, store: Optional[str] = None,
          path: Optional[str] = None, collection: Optional[str] = None, column: Optional[str] = None,
          concurrency: Union[None, int, Sequence[int]] = None,
          rps: Union[None, float, Sequence[float]] = None, max_outstanding: Optional[int] = None,
          nprobe: Optional[int] = None, hnsw_ef: Optional[int] = None,
          oversampling: Optional[float] = None, rescore: Optional[bool] = None, exact: bool = False,
          filter: Optional[FilterLike] = None, warmup: int = 0,
          sweep: Union[None, dict, Sequence[str]] = None, threads: Optional[int] = None) -> dict:
    """Run every query once against a store and measure recall@k, latency and QPS, as
    ``vforge bench``; returns the same dict as ``--json``: ``{k, queries, recall, recall_min,
    recall_max, qps, latency_ms: {p50, p95, p99, max}, errors, ...}``.  The store is the
    ``config``'s vectorstore, or ``store="local", path=..., collection=...``.

    The flags' arguments: ``nprobe`` (local IVF), ``hnsw_ef``, ``oversampling``, ``rescore``,
    ``exact`` (Qdrant), ``filter`` (``--filter``: text, ``"@FILE"`` or a dict), ``warmup``
    (untimed queries first), ``concurrency`` / ``rps`` (a list of values is a sweep, the
    throughput-latency curve), ``sweep`` (``--sweep``: ``{"nprobe": [1, 4, 16]}`` or
    ``["nprobe=1,4,16"]``; several keys form the grid, the last varying fastest).  With a sweep
    the result is ``{"points": [{"params": {...}, "recall": ..., ...}, ...]}``, as ``--json``.
    ``ground_truth`` may be left out when ``queries`` is an ann-filtering-benchmark bundle.
    ``threads``: the library's threads during the run (a local store's search; reported as the
    dict's ``threads``); the queries in flight are ``concurrency``."""
    specs = []
    if sweep is not None:
        items = sweep.items() if isinstance(sweep, dict) else None
        if items is None:
            specs.extend(str(x) for x in sweep)
        else:
            for name, values in items:
                if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                    values = [values]
                specs.append(f"{name}=" + ",".join(_knob_text(v) for v in values))
    fixed = {"nprobe": nprobe is not None, "hnsw-ef": hnsw_ef is not None,
             "oversampling": oversampling is not None, "rescore": rescore is not None,
             "exact": bool(exact), "concurrency": False, "rps": False}
    conc, rate = 1, 0.0
    if isinstance(concurrency, (list, tuple)):
        specs.append("concurrency=" + ",".join(str(int(c)) for c in concurrency))
    elif concurrency is not None:
        conc, fixed["concurrency"] = int(concurrency), True
    if isinstance(rps, (list, tuple)):
        specs.append("rps=" + ",".join(_knob_text(r) for r in rps))
    elif rps is not None:
        rate, fixed["rps"] = float(rps), True
    for spec in specs:
        name = spec.split("=", 1)[0].strip()
        if fixed.get(name):
            raise UsageError(f"{name.replace('-', '_')}= and sweep {name}=...: give the value once "
                             "(a fixed argument or a sweep)")
    if conc < 1:
        raise UsageError("concurrency must be at least 1")
    if nprobe is not None and int(nprobe) < 1:
        raise UsageError("nprobe must be at least 1")
    if warmup < 0:
        raise UsageError("warmup must be at least 0")
    js = _vforge.bench(_path(queries), _path(ground_truth) if ground_truth is not None else None,
                       int(k), _path(config) if config is not None else None, store, path,
                       collection, column, conc, rate, int(max_outstanding or 0),
                       int(hnsw_ef or 0), bool(exact), _threads(threads), _filter_text(filter),
                       int(nprobe or 0), int(warmup), float(oversampling or 0.0),
                       -1 if rescore is None else int(bool(rescore)), specs)
    return _json.loads(js)
