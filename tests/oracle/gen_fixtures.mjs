// gen_fixtures.mjs OUTDIR — writes the parquet fixtures that tests/format/test_fixtures.sh reads back
// with `vforge cat` and compares against DuckDB (dump_duckdb.mjs).
//
// Why three writers: each independent implementation takes different paths through the format, and
// a reader must handle all of them.
//  - DuckDB: every codec (its "LZ4" is LZ4_RAW), parquet_version v1 (PLAIN/dictionary) and v2
//    (BYTE_STREAM_SPLIT floats, DELTA_BINARY_PACKED ints, DELTA_LENGTH_BYTE_ARRAY strings, still v1
//    page headers), several row groups (DuckDB flushes at multiples of 2048 rows), nulls at every
//    level of every column type, maps, structs, nested lists, sparse and multivector shapes.
//  - arrow-rs (parquet-wasm): FixedSizeList vectors, the page index, dictionary pages that overflow a
//    small dictionary page size limit and fall back to PLAIN mid-chunk, many small data pages, data
//    page v2 (writer version 2), BYTE_STREAM_SPLIT and DELTA_* chosen per column, every codec
//    including the deprecated Hadoop-framed LZ4.
//  - hyparquet-writer: data page v2 only, with codecs we plug in from node's zlib (GZIP, BROTLI).
// Data is deterministic (no random()), so a failure reproduces.  Sizes are small: the whole set is
// written in a few seconds.  Prints one line per file to stderr; the list of files to stdout.
import { DuckDBInstance } from '@duckdb/node-api';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { parquetWriteBuffer } from 'hyparquet-writer';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const OUT = process.argv[2];
if (!OUT) {
  console.error('usage: node gen_fixtures.mjs OUTDIR');
  process.exit(2);
}
fs.mkdirSync(OUT, { recursive: true });
const written = [];
const note = (f, what) => { written.push(f); console.error(`fixture ${path.basename(f)}: ${what}`); };

// ------------------------------------------------------------------------------------ DuckDB
const N_DUCK = 5000, DIM = 16;
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();

// One row per i; each column has its own null pattern (different moduli) so that nulls fall on
// different rows, pages and row groups.  Special floats sit in fixed rows.
await q(`create table t as select
  i::BIGINT as id,
  (case when i % 17 = 3 then null
       else list_transform(range(${DIM}), x -> sin(i * ${DIM} + x)::FLOAT) end)::FLOAT[${DIM}] as vec,
  case when i % 13 = 2 then null
       when i % 97 = 5 then ['nan'::FLOAT, 'inf'::FLOAT, '-inf'::FLOAT, -0.0::FLOAT, 1e-45::FLOAT, 3.4028235e38::FLOAT, 1.17549435e-38::FLOAT]
       when i % 31 = 7 then []::FLOAT[]
       else list_transform(range(i % 9), x -> case when (i + x) % 11 = 0 then null else (cos(i + x) * 1000)::FLOAT end) end as vlist,
  case when i % 19 = 1 then null
       when i % 89 = 4 then ['nan'::DOUBLE, 'inf'::DOUBLE, '-inf'::DOUBLE, -0.0::DOUBLE, 5e-324::DOUBLE, 1.7976931348623157e308::DOUBLE]
       else list_transform(range(i % 5), x -> case when (i * x) % 7 = 3 then null else (i / 3.0 + x / 7.0)::DOUBLE end) end as dlist,
  case when i % 11 = 3 then null
       when i % 13 = 0 then 'quote " backslash \\ tab' || chr(9) || 'nl' || chr(10) || 'ctl' || chr(1) || ' é 漢字 😀 ' || i
       when i % 37 = 1 then ''
       else 'doc ' || i || ' ' || repeat(chr(97 + (i % 26)::INT), (i % 40)::INT) end as text,
  case when i % 19 = 4 then null
       else json_object('i', i, 'tag', 't' || (i % 7), 'score', (i % 100) / 100.0, 'arr', [i, i + 1])::JSON end as meta,
  case when i % 5 = 0 then null else (i % 3 = 0) end as flag,
  case when i % 23 = 1 then null else ((i * 7919) % 200000 - 100000)::INTEGER end as i32,
  case when i % 29 = 2 then null else (i::BIGINT * 1000000007000003 - 2500000000000000000)::BIGINT end as i64,
  case when i % 41 = 6 then null else (18446744073709551615::UBIGINT - (i * 1234567891)::UBIGINT) end as u64,
  case when i % 43 = 5 then null else ((i % 256) - 128)::TINYINT end as i8,
  case when i % 47 = 5 then null else (i * 13 % 65536)::USMALLINT end as u16,
  case when i % 53 = 5 then null else (4294967295 - i * 77)::UINTEGER end as u32,
  case when i % 7 = 6 then null when i % 101 = 0 then 'nan'::FLOAT when i % 101 = 1 then '-inf'::FLOAT
       else (i * 0.1 - 100)::FLOAT end as f32,
  case when i % 7 = 2 then null when i % 103 = 0 then 'nan'::DOUBLE when i % 103 = 1 then 'inf'::DOUBLE
       when i % 103 = 2 then -0.0::DOUBLE when i % 103 = 3 then 2.2250738585072014e-308
       else i / 3.0 - 500 end as dbl,
  case when i % 9 = 4 then null when i = 12 then date '0001-01-01' when i = 13 then date '9999-12-31'
       else date '1970-01-01' + (i * 37 - 50000)::INT end as dt,
  case when i % 9 = 5 then null when i = 14 then timestamp '1900-01-01 00:00:00.000001'
       else timestamp '1970-01-01 00:00:00' + to_microseconds(i::BIGINT * 987654321013 - 1000000000000000) end as ts,
  case when i % 10 = 1 then null when i = 15 then 999999999999999.999::DECIMAL(18,3)
       when i = 16 then -999999999999999.999::DECIMAL(18,3)
       else (i * 1234567.891 - 1000000000)::DECIMAL(18,3) end as dec18,
  case when i % 10 = 2 then null else (i * 3.07 - 5000)::DECIMAL(9,2) end as dec9,
  case when i % 10 = 3 then null when i = 17 then 12345678901234567890123456789012.345678::DECIMAL(38,6)
       else (i::DECIMAL(38,6) * 1000000000000.123456 - 2000000000000000) end as dec38,
  case when i % 9 = 0 then null
       else {'a': case when i % 4 = 0 then null else i::INT end,
             'b': case when i % 6 = 1 then null else ['x' || i, null, 'y'][1:(i % 4)::INT] end} end as st,
  case when i % 8 = 0 then null when i % 8 = 1 then MAP {}::MAP(VARCHAR, INT)
       else map(['k' || (i % 5), 'z' || i], [i::INT, case when i % 3 = 0 then null else -i::INT end]) end as mp,
  case when i % 5 = 0 then null when i % 5 = 1 then [[i::INT, null], null, [], [(i + 1)::INT]]
       when i % 5 = 2 then []::INT[][] when i % 5 = 3 then [null]::INT[][]
       else [[i::INT]] end as nested,
  case when i % 12 = 7 then null
       else {'indices': list_transform(range(i % 7), x -> (x * 3 + i % 5)::UINTEGER),
             'values': list_transform(range(i % 7), x -> (x / 2.0 + i)::FLOAT)} end as sparse,
  case when i % 14 = 9 then null
       else list_transform(range(i % 4), k -> list_transform(range(8), x -> cos(i * 100 + k * 8 + x)::FLOAT)) end as multi,
  case when i % 29 = 0 then null else 'cat_' || (i % 5) end as cat,
  case when i % 16 = 3 then null when i % 3 = 0 then '\\xFF\\xFEab\\x00\\xC3'::BLOB
       else ('bytes ' || i)::BLOB end as bin
  from range(${N_DUCK}) r(i)`);

const codecs = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD', 'LZ4', 'BROTLI'];
for (const ver of ['v1', 'v2']) {
  for (const c of codecs) {
    const f = path.join(OUT, `duck_${ver}_${c.toLowerCase()}.parquet`);
    await q(`copy t to '${f}' (format parquet, compression ${c}, row_group_size 2048, parquet_version ${ver})`);
    note(f, `DuckDB ${N_DUCK} rows, ${ver}, ${c}`);
  }
}
// Integer extremes in their own files: DuckDB's v2 writer computes DELTA_BINARY_PACKED deltas of an
// INT32 column in 64 bits, so INT32_MIN next to INT32_MAX gives miniblocks 33 bits wide (arrow-rs
// refuses those: "min_delta too large"; DuckDB reads them back).  Kept apart so that the main files
// test everything else even if a reader refuses this.
await q(`create table ext as select i::BIGINT as id,
  -- distinct values (i varies them) so that v2 chooses DELTA_BINARY_PACKED, not a dictionary
  case i % 5 when 0 then -2147483648 + i when 1 then 2147483647 - i when 2 then i when 3 then null else -i end::INTEGER as i32,
  case i % 5 when 0 then -9223372036854775808 + i when 1 then 9223372036854775807 - i when 2 then i when 3 then -i else null end::BIGINT as i64,
  case i % 4 when 0 then 18446744073709551615 - i when 1 then i when 2 then 9223372036854775808 + i else null end::UBIGINT as u64,
  case i % 3 when 0 then 4294967295 - i when 1 then i else null end::UINTEGER as u32,
  case i % 3 when 0 then -128 when 1 then 127 else null end::TINYINT as i8,
  case i % 3 when 0 then -32768 when 1 then 32767 else null end::SMALLINT as i16
  from range(3000) r(i)`);
for (const ver of ['v1', 'v2']) {
  const f = path.join(OUT, `duck_${ver}_int_extremes.parquet`);
  await q(`copy ext to '${f}' (format parquet, compression ZSTD, row_group_size 2048, parquet_version ${ver})`);
  note(f, `DuckDB integer extremes, ${ver}`);
}
// Every string column dictionary-encoded is the default; also one file where the dictionary must
// be abandoned (DuckDB stops dictionary-encoding a column whose dictionary grows too large).
{
  const f = path.join(OUT, 'duck_v1_nodict.parquet');
  await q(`copy (select id, text, cat, f32, dbl from t) to '${f}' (format parquet, compression SNAPPY, dictionary_size_limit 1, row_group_size 2048)`);
  note(f, 'DuckDB dictionary_size_limit 1');
}
{
  const f = path.join(OUT, 'duck_768.parquet');
  await q(`copy (select i::BIGINT as id,
      list_transform(range(768), x -> sin(i * 768 + x)::FLOAT)::FLOAT[768] as emb,
      'doc ' || i as text
    from range(2000) r(i)) to '${f}' (format parquet, compression ZSTD, row_group_size 2048)`);
  note(f, 'DuckDB 2000 x FLOAT[768], ZSTD');
}
con.closeSync?.();

// ---------------------------------------------------------------------------- arrow-rs (parquet-wasm)
const N_PW = 3000, D_PW = 32;
function arrowTable() {
  const n = N_PW;
  const flat = new Float32Array(n * D_PW);
  for (let i = 0; i < flat.length; i++) flat[i] = Math.fround(Math.sin(i) * 100);
  // null vectors every 50th row (their slots still hold floats, as arrow requires)
  const valid = new Uint8Array(Math.ceil(n / 8));
  let nulls = 0;
  for (let i = 0; i < n; i++) { if (i % 50 === 7) nulls++; else valid[i >> 3] |= 1 << (i & 7); }
  const child = arrow.makeData({ type: new arrow.Float32(), length: n * D_PW, data: flat });
  const emb = arrow.makeVector(arrow.makeData({
    type: new arrow.FixedSizeList(D_PW, new arrow.Field('item', new arrow.Float32(), false)),
    length: n, nullCount: nulls, nullBitmap: valid, child }));
  // variable-length list with null rows and null elements
  const lists = Array.from({ length: n }, (_, i) => i % 23 === 4 ? null
    : Array.from({ length: i % 6 }, (_, k) => (i + k) % 13 === 0 ? null : Math.fround(i * 0.25 + k)));
  const embList = arrow.vectorFromArray(lists, new arrow.List(new arrow.Field('item', new arrow.Float32(), true)));
  const id = arrow.vectorFromArray(BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 7n - 1000n), new arrow.Int64());
  // many distinct floats and strings: the dictionary overflows its page size limit
  const f = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i % 19 === 3 ? null : Math.fround(Math.cos(i) * 1e3)), new arrow.Float32());
  const d = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i % 21 === 3 ? null : Math.tan(i) * 1e6), new arrow.Float64());
  const text = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i % 17 === 5 ? null : `text ${i} ${'ü'.repeat(i % 7)}`), new arrow.Utf8());
  const cat = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i % 31 === 5 ? null : `c${i % 4}`), new arrow.Utf8());
  const i32 = arrow.vectorFromArray(Array.from({ length: n }, (_, i) => i % 11 === 5 ? null : (i * 104729) % 1000003 - 500000), new arrow.Int32());
  return new arrow.Table({ id, emb, emb_list: embList, f, d, text, cat, i32 });
}
const ipc = arrow.tableToIPC(arrowTable(), 'stream');
function pwWrite(name, what, configure) {
  const f = path.join(OUT, name);
  const props = configure(new pw.WriterPropertiesBuilder().setMaxRowGroupSize(1000)).build();
  const out = pw.writeParquet(pw.Table.fromIPCStream(ipc), props);
  fs.writeFileSync(f, out);
  note(f, `arrow-rs ${N_PW} rows, ${what}`);
}
const pwCodecs = { UNCOMPRESSED: pw.Compression.UNCOMPRESSED, SNAPPY: pw.Compression.SNAPPY, GZIP: pw.Compression.GZIP,
  BROTLI: pw.Compression.BROTLI, LZ4: pw.Compression.LZ4, ZSTD: pw.Compression.ZSTD, LZ4_RAW: pw.Compression.LZ4_RAW };
for (const [cname, c] of Object.entries(pwCodecs)) {
  // dictionary on, 512-byte dictionary pages -> fallback to PLAIN mid-chunk; tiny data pages; page index (default)
  pwWrite(`pw_v1_dictfallback_${cname.toLowerCase()}.parquet`, `v1 pages, dictionary fallback, small pages, ${cname}`,
    (b) => b.setCompression(c).setWriterVersion(pw.WriterVersion.V1).setDictionaryEnabled(true)
      .setDictionaryPageSizeLimit(512).setDataPageSizeLimit(1024).setWriteBatchSize(64));
}
for (const cname of ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD', 'LZ4_RAW', 'BROTLI']) {
  pwWrite(`pw_v2_dictfallback_${cname.toLowerCase()}.parquet`, `data page v2, dictionary fallback, small pages, ${cname}`,
    (b) => b.setCompression(pwCodecs[cname]).setWriterVersion(pw.WriterVersion.V2).setDictionaryEnabled(true)
      .setDictionaryPageSizeLimit(512).setDataPageSizeLimit(1024).setWriteBatchSize(64));
}
for (const ver of ['V1', 'V2']) {
  pwWrite(`pw_${ver.toLowerCase()}_bss_delta.parquet`, `${ver} BYTE_STREAM_SPLIT floats, DELTA_* ints/strings, ZSTD`,
    (b) => b.setCompression(pw.Compression.ZSTD).setWriterVersion(pw.WriterVersion[ver]).setDictionaryEnabled(false)
      .setDataPageSizeLimit(4096).setWriteBatchSize(128)
      // nested leaves cannot be named through setColumnEncoding (the path is not split on '.'), so
      // BYTE_STREAM_SPLIT is the default and the non-float columns are overridden
      .setEncoding(pw.Encoding.BYTE_STREAM_SPLIT)
      .setColumnEncoding('id', pw.Encoding.DELTA_BINARY_PACKED).setColumnEncoding('i32', pw.Encoding.DELTA_BINARY_PACKED)
      .setColumnEncoding('text', pw.Encoding.DELTA_BYTE_ARRAY).setColumnEncoding('cat', pw.Encoding.DELTA_LENGTH_BYTE_ARRAY));
}
pwWrite('pw_v1_plain_nostats.parquet', 'PLAIN, no dictionary, no statistics/page index, one row group per 1000 rows',
  (b) => b.setCompression(pw.Compression.UNCOMPRESSED).setDictionaryEnabled(false).setStatisticsEnabled(pw.EnabledStatistics.None));

// ------------------------------------------------------------------------------- hyparquet-writer
const N_HW = 2000, D_HW = 24;
const listSchema = (name, elemRep) => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'FLOAT', repetition_type: elemRep }];
const hwSchema = [{ name: 'root', num_children: 5 },
  { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
  ...listSchema('emb', 'REQUIRED'), ...listSchema('vlist', 'OPTIONAL'),
  { name: 'text', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'x', type: 'DOUBLE', repetition_type: 'OPTIONAL' }];
const hwVecs = Array.from({ length: N_HW }, (_, i) => i % 40 === 9 ? null
  : Array.from({ length: D_HW }, (_, j) => Math.fround(Math.sin(i * D_HW + j))));
const hwVlist = Array.from({ length: N_HW }, (_, i) => i % 15 === 2 ? null
  : Array.from({ length: i % 5 }, (_, k) => (i + k) % 7 === 0 ? null : Math.fround(i + k / 8)));
const compressors = {
  GZIP: (b) => new Uint8Array(zlib.gzipSync(b)),
  BROTLI: (b) => new Uint8Array(zlib.brotliCompressSync(b)),
};
for (const codec of ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI']) {
  for (const enc of ['PLAIN', 'BYTE_STREAM_SPLIT']) {
    if (enc === 'BYTE_STREAM_SPLIT' && codec !== 'SNAPPY') continue;
    const f = path.join(OUT, `hw_v2_${enc === 'PLAIN' ? 'plain' : 'bss'}_${codec.toLowerCase()}.parquet`);
    const buf = parquetWriteBuffer({ schema: hwSchema, codec, compressors, rowGroupSize: 700, pageSize: 2048,
      columnData: [
        { name: 'id', data: BigInt64Array.from({ length: N_HW }, (_, i) => BigInt(i) - 5n) },
        { name: 'emb', data: hwVecs, encoding: enc, columnIndex: true, offsetIndex: true },
        { name: 'vlist', data: hwVlist, encoding: enc },
        { name: 'text', data: hwVecs.map((_, i) => i % 9 === 1 ? null : `hw ${i}`) },
        { name: 'x', data: hwVecs.map((_, i) => i % 8 === 1 ? null : i / 7) }] });
    fs.writeFileSync(f, new Uint8Array(buf));
    note(f, `hyparquet-writer ${N_HW} rows, data page v2, ${enc}, ${codec}`);
  }
}
for (const f of written) console.log(f);
