// duckdb_scan.mjs FILE [--column emb] [--threads 1] — DuckDB's scan of a float-vector column, the
// reference for `vforge scan` (DESIGN.md: the vforge scan must be >= 5x DuckDB's single-thread scan).
// The query, sum(list_sum(emb)), forces DuckDB to decode every float of every row and adds little
// work on top (one pass over each list); the sum doubles as a checksum comparable to vforge scan's
// (the sum of all decoded floats; summation order differs, so equal to ~1e-9 relative).
// Prints one JSON line: {"seconds", "rows", "checksum", "threads"}; seconds excludes start-up and
// the footer read (a LIMIT 0 query warms the metadata cache first).
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
// the oracle modules live in tests/oracle/node_modules (scripts/install-deps.sh installs them)
const oracleRequire = createRequire(fileURLToPath(new URL('../../tests/oracle/package.json', import.meta.url)));
const { DuckDBInstance } = await import(pathToFileURL(oracleRequire.resolve('@duckdb/node-api')).href);
const args = process.argv.slice(2);
let file = null, column = 'emb', threads = 1;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--column') column = args[++i];
  else if (args[i] === '--threads') threads = parseInt(args[++i], 10);
  else file = args[i];
}
if (!file) { console.error('usage: node duckdb_scan.mjs FILE [--column emb] [--threads 1]'); process.exit(2); }
const inst = await DuckDBInstance.create(':memory:', { threads: String(threads) });
const con = await inst.connect();
const src = `read_parquet('${file.replace(/'/g, "''")}')`;
const col = '"' + column.replace(/"/g, '""') + '"';
await con.run(`select ${col} from ${src} limit 0`);
const t0 = performance.now();
const r = (await con.runAndReadAll(`select count(*)::BIGINT as n, sum(list_sum(${col}))::DOUBLE as s from ${src}`)).getRows()[0];
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ seconds, rows: Number(r[0]), checksum: r[1], threads }));
