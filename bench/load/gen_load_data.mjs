// gen_load_data.mjs OUTDIR [ROWS=200000] [DIM=768] [FILES=4] [CODEC=zstd] — the load benchmark's
// corpus, written by DuckDB: OUTDIR/part-<k>.parquet with columns id BIGINT, emb FLOAT[DIM]
// (a plain LIST of FLOAT) and text VARCHAR, row groups of 10000 rows (the size vector corpora
// are usually written with; DuckDB's default of 122880 rows x 768 floats is a 377 MB unit).
// The floats are deterministic (sin), so runs are comparable.
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
const oracleRequire = createRequire(fileURLToPath(new URL('../../tests/oracle/package.json', import.meta.url)));
const { DuckDBInstance } = await import(pathToFileURL(oracleRequire.resolve('@duckdb/node-api')).href);
const [out, rowsArg, dimArg, filesArg, codecArg] = process.argv.slice(2);
if (!out) { console.error('usage: node gen_load_data.mjs OUTDIR [ROWS] [DIM] [FILES] [CODEC]'); process.exit(2); }
const rows = parseInt(rowsArg || '200000', 10), dim = parseInt(dimArg || '768', 10);
const files = parseInt(filesArg || '4', 10), codec = codecArg || 'zstd';
fs.mkdirSync(out, { recursive: true });
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const t0 = performance.now();
const per = Math.ceil(rows / files);
for (let k = 0; k < files; k++) {
  const lo = k * per, hi = Math.min(rows, lo + per);
  const f = path.join(out, `part-${String(k).padStart(3, '0')}.parquet`);
  await con.run(`copy (select i::BIGINT as id,
      list_transform(range(${dim}), x -> sin(i * ${dim} + x)::FLOAT)::FLOAT[${dim}] as emb,
      'document ' || i::VARCHAR as text
    from range(${lo}, ${hi}) r(i) order by i)
    to '${f.replace(/'/g, "''")}' (format parquet, compression ${codec}, row_group_size 10000)`);
}
console.error(`gen_load_data: ${files} files, ${rows} x ${dim} (${codec}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
