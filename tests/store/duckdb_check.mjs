// Reads a local-store collection with DuckDB (an independent parquet reader) and compares it
// row by row with the expected.jsonl written by store_test_local's export_for_duckdb.
// usage: node duckdb_check.mjs <oracle dir with node_modules> <collection dir> <expected.jsonl>
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const [oracle, coll, expectedPath] = process.argv.slice(2);
const require = createRequire(oracle + '/package.json');
const { DuckDBInstance } = require('@duckdb/node-api');
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const glob = `${coll}/seg-*.parquet`;
const fail = (m) => { console.error('FAIL: ' + m); process.exit(1); };
const [cnt] = await q(`select count(*)::INT n, count(distinct id)::INT d from read_parquet('${glob}')`);
const expected = readFileSync(expectedPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
if (cnt.n !== expected.length || cnt.d !== expected.length)
  fail(`rows ${cnt.n}, distinct ids ${cnt.d}, expected ${expected.length} each`);
const types = await q(`select column_name, column_type from (describe select * from read_parquet('${glob}'))`);
const ty = Object.fromEntries(types.map((r) => [r.column_name, r.column_type]));
if (!/^FLOAT\[/.test(ty.dense) || ty.payload !== 'VARCHAR' || ty.id !== 'VARCHAR' || ty.id_num !== 'BIGINT')
  fail('unexpected column types ' + JSON.stringify(ty));
const rows = await q(`select id, id_num::VARCHAR id_num, dense, colbert, sparse, payload from read_parquet('${glob}')`);
const byId = new Map(rows.map((r) => [r.id, r]));
const sameFloats = (a, b) => a.length === b.length && a.every((x, i) => Math.fround(Number(x)) === Math.fround(Number(b[i])));
let checked = 0;
for (const e of expected) {
  const r = byId.get(e.id);
  if (!r) fail(`id ${e.id} missing`);
  const isNum = /^[0-9]+$/.test(e.id);
  const wantNum = isNum && BigInt(e.id) <= 9223372036854775807n ? e.id : null;
  if ((r.id_num ?? null) !== wantNum) fail(`id ${e.id}: id_num ${r.id_num}, expected ${wantNum}`);
  if (e.dense === null ? r.dense !== null : !sameFloats(r.dense, e.dense)) fail(`id ${e.id}: dense ${JSON.stringify(r.dense)} != ${JSON.stringify(e.dense)}`);
  if (!sameFloats(r.colbert, e.colbert)) fail(`id ${e.id}: colbert differs`);
  const sp = JSON.parse(r.sparse);
  if (JSON.stringify(sp.indices) !== JSON.stringify(e.sparse.indices) || !sameFloats(sp.values, e.sparse.values)) fail(`id ${e.id}: sparse differs`);
  if ((r.payload ?? null) !== e.payload) fail(`id ${e.id}: payload ${r.payload} != ${e.payload}`);
  checked++;
}
console.log(`duckdb read ${checked} points, each id once, every column equal`);
