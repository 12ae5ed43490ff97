// gen_scan_data.mjs OUTDIR [ROWS=100000] [DIM=768] — the scan benchmark's input, written by DuckDB:
// OUTDIR/vec_<ROWS>_uncompressed.parquet and OUTDIR/vec_<ROWS>_zstd.parquet, columns
// id BIGINT and emb FLOAT[DIM] (DuckDB writes it as a plain LIST of FLOAT).  DuckDB's defaults
// (parquet v1, dictionary off for these floats) except the codec and row groups of 10240 rows
// (the size of a typical embedding batch file's groups; it lets both sides parallelise), so
// both sides of bench/scan/run.sh read the file an ordinary DuckDB user would produce.
// The floats are deterministic (sin), so checksums can be compared across runs.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
// the oracle modules live in tests/oracle/node_modules (scripts/install-deps.sh installs them)
const oracleRequire = createRequire(fileURLToPath(new URL('../../tests/oracle/package.json', import.meta.url)));
const { DuckDBInstance } = await import(pathToFileURL(oracleRequire.resolve('@duckdb/node-api')).href);
import fs from 'node:fs';
import path from 'node:path';
const [out, rowsArg, dimArg] = process.argv.slice(2);
if (!out) { console.error('usage: node gen_scan_data.mjs OUTDIR [ROWS] [DIM]'); process.exit(2); }
const rows = parseInt(rowsArg || '100000', 10), dim = parseInt(dimArg || '768', 10);
fs.mkdirSync(out, { recursive: true });
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const t0 = performance.now();
await con.run(`create table t as select i::BIGINT as id,
  list_transform(range(${dim}), x -> sin(i * ${dim} + x)::FLOAT)::FLOAT[${dim}] as emb
  from range(${rows}) r(i)`);
for (const codec of ['uncompressed', 'zstd']) {
  const f = path.join(out, `vec_${rows}_${codec}.parquet`);
  await con.run(`copy t to '${f.replace(/'/g, "''")}' (format parquet, compression ${codec}, row_group_size 10240)`);
  console.error(`gen_scan_data: ${f} (${(fs.statSync(f).size / 1e6).toFixed(1)} MB)`);
}
console.error(`gen_scan_data: ${rows} x ${dim} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
