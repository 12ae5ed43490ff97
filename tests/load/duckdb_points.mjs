// Reads a local-store collection's segments with DuckDB (an independent parquet reader) and
// checks them point by point against the expected set written by points.py (one JSON line per
// point: id, emb, payload): same ids, each stored once, float32-equal vectors, equal payloads.
// usage: node duckdb_points.mjs <oracle dir with node_modules> <collection dir> <expected.jsonl>
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const [oracle, coll, expectedPath] = process.argv.slice(2);
const require = createRequire(oracle + '/package.json');
const { DuckDBInstance } = require('@duckdb/node-api');
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const fail = (m) => { console.error('FAIL: ' + m); process.exit(1); };
const glob = `${coll}/seg-*.parquet`;
const expected = readFileSync(expectedPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const [cnt] = await q(`select count(*)::INT n, count(distinct id)::INT d from read_parquet('${glob}')`);
if (cnt.n !== expected.length || cnt.d !== expected.length)
  fail(`duckdb: ${cnt.n} rows, ${cnt.d} distinct ids; expected ${expected.length} of each`);
const rows = await q(`select id, emb, payload from read_parquet('${glob}')`);
const byId = new Map(rows.map((r) => [r.id, r]));
const canon = (v) => Array.isArray(v) ? '[' + v.map(canon).join(',') + ']'
  : v && typeof v === 'object' ? '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canon(v[k])).join(',') + '}'
  : JSON.stringify(v);
for (const e of expected) {
  const r = byId.get(e.id);
  if (!r) fail(`id ${e.id} missing`);
  const emb = r.emb.map(Number);
  if (emb.length !== e.emb.length || emb.some((x, i) => Math.fround(x) !== Math.fround(e.emb[i])))
    fail(`id ${e.id}: emb ${JSON.stringify(emb).slice(0, 80)} != ${JSON.stringify(e.emb).slice(0, 80)}`);
  const payload = r.payload === null ? {} : JSON.parse(r.payload);
  if (canon(payload) !== canon(e.payload)) fail(`id ${e.id}: payload ${r.payload} != ${JSON.stringify(e.payload)}`);
}
console.log(`duckdb: ${expected.length} points, each id once, vectors and payloads equal`);
