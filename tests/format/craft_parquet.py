"""craft_parquet.py — write parquet files byte by byte, for shapes no writer installed here makes.

Real writers the reader must accept produce footers that pyarrow, DuckDB and polars never write:
segmentio/parquet-go sets a physical type on the schema root and writes empty struct groups,
some writers get ColumnMetaData.num_values wrong.  Those files are made here, from the spec
(parquet-format parquet.thrift, field ids below; thrift compact protocol), with plain,
uncompressed v1 data pages, so every byte of the footer is under the test's control.

    from craft_parquet import *
    schema = [root(2), leaf("a", INT32, OPTIONAL), leaf("s", BYTE_ARRAY, REQUIRED, logical=STRING)]
    col_a = column(["a"], INT32, pages=[page([1, None, 3], max_def=1)])
    write_file(path, schema, [row_group(3, [col_a, ...])])

Only the standard library is used.
"""
import struct

# physical types, repetitions, encodings (parquet.thrift)
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = range(8)
REQUIRED, OPTIONAL, REPEATED = range(3)
PLAIN, RLE = 0, 3
# LogicalType union members (field ids)
STRING, MAP, LIST, DATE, TIME, TIMESTAMP, VARIANT = 1, 2, 3, 6, 7, 8, 16
# converted types
CT_UTF8, CT_LIST = 0, 3

# thrift compact type ids
T_TRUE, T_FALSE, T_BYTE, T_I16, T_I32, T_I64, T_DOUBLE, T_BINARY, T_LIST, T_SET, T_MAP, T_STRUCT = (
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)


class I32:
    def __init__(self, v): self.v = v
class I64:
    def __init__(self, v): self.v = v
class I8:
    def __init__(self, v): self.v = v
class Bin:
    def __init__(self, v): self.v = v if isinstance(v, bytes) else v.encode()
class Bool:
    def __init__(self, v): self.v = v
class List:
    def __init__(self, etype, items): self.etype, self.items = etype, items
class Struct:
    """fields: {field id: I32/I64/Bin/Bool/List/Struct}, written in field-id order"""
    def __init__(self, fields=None): self.fields = fields or {}
class Raw:
    """bytes written verbatim where a list would go (fastparquet's 0x00 empty list)"""
    def __init__(self, b): self.b = b


def varint(n):
    """ULEB128"""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zz(n):
    """zigzag varint (thrift compact i16/i32/i64)"""
    return varint((n << 1) ^ (n >> 63))


def _wire_type(v):
    if isinstance(v, Bool): return T_TRUE if v.v else T_FALSE
    if isinstance(v, I8): return T_BYTE
    if isinstance(v, I32): return T_I32
    if isinstance(v, I64): return T_I64
    if isinstance(v, Bin): return T_BINARY
    if isinstance(v, (List, Raw)): return T_LIST
    if isinstance(v, Struct): return T_STRUCT
    raise TypeError(v)


def _value(v):
    if isinstance(v, I8): return struct.pack('<b', v.v)
    if isinstance(v, (I32, I64)): return zz(v.v)
    if isinstance(v, Bin): return varint(len(v.v)) + v.v
    if isinstance(v, Bool): return b'\x01' if v.v else b'\x02'  # list element form
    if isinstance(v, Raw): return v.b
    if isinstance(v, List):
        n = len(v.items)
        head = bytes([(n << 4) | v.etype]) if n < 15 else bytes([0xF0 | v.etype]) + varint(n)
        return head + b''.join(_value(x) for x in v.items)
    if isinstance(v, Struct): return encode_struct(v)
    raise TypeError(v)


def encode_struct(s):
    out = bytearray()
    last = 0
    for fid in sorted(s.fields):
        v = s.fields[fid]
        if v is None:
            continue
        t = _wire_type(v)
        d = fid - last
        out += bytes([(d << 4) | t]) if 0 < d <= 15 else bytes([t]) + zz(fid)
        last = fid
        if not isinstance(v, Bool):
            out += _value(v)
    out.append(0)
    return bytes(out)


# ------------------------------------------------------------------ schema elements

def logical(kind, params=None):
    return Struct({kind: Struct(params or {})})


def root(nchildren, ptype=None, name="schema"):
    """the schema root; ptype != None writes a physical type on it (segmentio/parquet-go)"""
    return Struct({1: I32(ptype) if ptype is not None else None, 4: Bin(name), 5: I32(nchildren)})


def leaf(name, ptype, rep, logical_type=None, converted=None, type_length=None):
    """logical_type STRING also writes converted type UTF8, as writers do (DuckDB reads only that)"""
    lt = logical(logical_type) if isinstance(logical_type, int) else logical_type
    if logical_type == STRING and converted is None:
        converted = CT_UTF8
    return Struct({1: I32(ptype), 2: I32(type_length) if type_length else None, 3: I32(rep),
                   4: Bin(name), 6: I32(converted) if converted is not None else None, 10: lt})


def group(name, rep, nchildren, logical_type=None, converted=None, write_num_children=True):
    """logical_type LIST also writes converted type LIST, as writers do (DuckDB reads only that)"""
    lt = logical(logical_type) if isinstance(logical_type, int) else logical_type
    if logical_type == LIST and converted is None:
        converted = CT_LIST
    return Struct({3: I32(rep), 4: Bin(name),
                   5: I32(nchildren) if write_num_children else None,
                   6: I32(converted) if converted is not None else None, 10: lt})


# ------------------------------------------------------------------ pages

def _bit_width(m):
    return m.bit_length()


def _rle_levels(levels, max_level):
    """RLE/bit-packed hybrid, RLE runs only, with the v1 4-byte length prefix"""
    bw = _bit_width(max_level)
    nbytes = (bw + 7) // 8
    out = bytearray()
    i = 0
    while i < len(levels):
        j = i
        while j < len(levels) and levels[j] == levels[i]:
            j += 1
        out += varint((j - i) << 1) + levels[i].to_bytes(nbytes, 'little')
        i = j
    return struct.pack('<I', len(out)) + bytes(out)


def _plain(ptype, values, type_length=None):
    if ptype == BOOLEAN:
        out = bytearray((len(values) + 7) // 8)
        for i, v in enumerate(values):
            if v:
                out[i // 8] |= 1 << (i % 8)
        return bytes(out)
    if ptype == INT32: return b''.join(struct.pack('<i', v) for v in values)
    if ptype == INT64: return b''.join(struct.pack('<q', v) for v in values)
    if ptype == FLOAT: return b''.join(struct.pack('<f', v) for v in values)
    if ptype == DOUBLE: return b''.join(struct.pack('<d', v) for v in values)
    if ptype == BYTE_ARRAY:
        bs = [v if isinstance(v, bytes) else v.encode() for v in values]
        return b''.join(struct.pack('<I', len(b)) + b for b in bs)
    if ptype == FIXED_LEN_BYTE_ARRAY:
        assert all(len(v) == type_length for v in values)
        return b''.join(values)
    raise ValueError(ptype)


def page(values, max_def=0, max_rep=0, defs=None, reps=None):
    """one data page: `values` are the non-null values; `defs` default to max_def for each value
    (a None in `values` is a null at def max_def - 1 when defs is not given)"""
    if defs is None:
        defs = [max_def - 1 if v is None else max_def for v in values]
        values = [v for v in values if v is not None]
    n = len(defs)
    if reps is None:
        reps = [0] * n
    assert len(reps) == n
    return {'values': values, 'defs': defs, 'reps': reps, 'max_def': max_def, 'max_rep': max_rep}


def column(path, ptype, pages, type_length=None, num_values=None, total_compressed_size=None):
    """a column chunk; num_values=None writes the true count, an int overrides it"""
    return {'path': path, 'ptype': ptype, 'pages': pages, 'type_length': type_length,
            'num_values': num_values, 'total_compressed_size': total_compressed_size}


def row_group(num_rows, columns):
    return {'num_rows': num_rows, 'columns': columns}


def write_file(path, schema, row_groups, kv=None, kv_raw=None, created_by="vforge craft_parquet.py",
               num_rows=None):
    """kv: [(key, value)]; kv_raw: bytes written as the key_value_metadata list itself"""
    body = bytearray(b'PAR1')
    rgs = []
    total_rows = 0
    for rg in row_groups:
        chunks = []
        rg_bytes = 0
        for col in rg['columns']:
            start = len(body)
            nvals = 0
            for pg in col['pages']:
                data = b''
                if pg['max_rep'] > 0:
                    data += _rle_levels(pg['reps'], pg['max_rep'])
                if pg['max_def'] > 0:
                    data += _rle_levels(pg['defs'], pg['max_def'])
                data += _plain(col['ptype'], pg['values'], col['type_length'])
                hdr = encode_struct(Struct({
                    1: I32(0), 2: I32(len(data)), 3: I32(len(data)),
                    5: Struct({1: I32(len(pg['defs'])), 2: I32(PLAIN), 3: I32(RLE), 4: I32(RLE)})}))
                body += hdr + data
                nvals += len(pg['defs'])
            size = len(body) - start
            rg_bytes += size
            meta = Struct({
                1: I32(col['ptype']), 2: List(T_I32, [I32(PLAIN), I32(RLE)]),
                3: List(T_BINARY, [Bin(p) for p in col['path']]), 4: I32(0),
                5: I64(nvals if col['num_values'] is None else col['num_values']),
                6: I64(size), 7: I64(size if col['total_compressed_size'] is None
                                     else col['total_compressed_size']),
                9: I64(start)})
            chunks.append(Struct({2: I64(start), 3: meta}))
        rgs.append(Struct({1: List(T_STRUCT, chunks), 2: I64(rg_bytes), 3: I64(rg['num_rows'])}))
        total_rows += rg['num_rows']
    fields = {1: I32(1), 2: List(T_STRUCT, schema),
              3: I64(total_rows if num_rows is None else num_rows),
              4: List(T_STRUCT, rgs), 6: Bin(created_by)}
    if kv is not None:
        fields[5] = List(T_STRUCT, [Struct({1: Bin(k), 2: Bin(v)}) for k, v in kv])
    if kv_raw is not None:
        fields[5] = Raw(kv_raw)
    footer = encode_struct(Struct(fields))
    body += footer + struct.pack('<I', len(footer)) + b'PAR1'
    with open(path, 'wb') as f:
        f.write(bytes(body))
