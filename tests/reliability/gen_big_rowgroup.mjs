// Writes parquet files whose single row group is far larger than a small --memory-budget, the
// shape Spark-style writers produce (one huge row group, many pages per column).  The rows come
// from DuckDB; arrow-rs (parquet-wasm) rewrites them as ONE row group with bounded pages.
//   node gen_big_rowgroup.mjs ORACLE_DIR OUT_DIR BIG_ROWS [MIXED_ROWS]
// mixed_v1.parquet / mixed_v2.parquet: MIXED_ROWS (default 60k) rows, zstd, 16 KiB data pages, dictionary on:
//   id BIGINT, name VARCHAR (NULL every 7th), emb FLOAT[] (8 floats, NULL every 11th), tags
//   VARCHAR[] (NULL, empty and 1..4-element lists), score DOUBLE.
// big.parquet: BIG_ROWS rows of id BIGINT + emb FLOAT[128] (random), uncompressed, 1 MiB pages.
const [oracle, out, bigRows, mixedRows = '60000'] = process.argv.slice(2);
const req = (m) => import(`${oracle}/node_modules/${m}`);
const { DuckDBInstance } = await req('@duckdb/node-api/lib/index.js');
const pw = await req('parquet-wasm/node/parquet_wasm.js');
const fs = await import('node:fs');
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
await con.run(`copy (select i::BIGINT id,
    case when i % 7 = 3 then NULL else 'name-' || (i % 500)::VARCHAR end "name",
    case when i % 11 = 5 then NULL else [i * 0.5, i % 13, -i, 1.0 / (i + 1), i % 3, 7, i, 0.25]::FLOAT[] end emb,
    case when i % 9 = 0 then NULL when i % 9 = 1 then []::VARCHAR[]
         else list_transform(range(i % 4 + 1), x -> 't' || (i + x)::VARCHAR) end tags,
    i * 1.0e-3 score
  from range(${Number(mixedRows)}) r(i)) to '${out}/duck_mixed.parquet' (format parquet)`);
await con.run(`select setseed(0.42)`);
await con.run(`copy (select i::BIGINT id, list_transform(range(128), x -> (random() * 2 - 1)::FLOAT) emb
  from range(${Number(bigRows)}) r(i)) to '${out}/duck_big.parquet' (format parquet)`);
function rewrite(src, dst, configure) {
  const t = pw.readParquet(fs.readFileSync(src));
  const props = configure(new pw.WriterPropertiesBuilder().setMaxRowGroupSize(100000000)).build();
  fs.writeFileSync(dst, pw.writeParquet(t, props));
}
for (const v of ['V1', 'V2'])
  rewrite(`${out}/duck_mixed.parquet`, `${out}/mixed_${v.toLowerCase()}.parquet`, (b) =>
    b.setCompression(pw.Compression.ZSTD).setWriterVersion(pw.WriterVersion[v]).setDictionaryEnabled(true)
      .setDataPageSizeLimit(16384).setWriteBatchSize(256));
rewrite(`${out}/duck_big.parquet`, `${out}/big.parquet`, (b) =>
  b.setCompression(pw.Compression.UNCOMPRESSED).setDictionaryEnabled(false).setDataPageSizeLimit(1 << 20));
fs.unlinkSync(`${out}/duck_mixed.parquet`);
fs.unlinkSync(`${out}/duck_big.parquet`);
console.log('wrote', out);
