// Oracle reader: prints every row of a parquet file, as DuckDB reads it, as one JSON object per
// line on stdout (column names as keys, in schema order).
//   node read_with_duckdb.mjs FILE.parquet
//   node read_with_duckdb.mjs --meta FILE.parquet   one line per column chunk from DuckDB's
//     parquet_metadata() instead (row_group_id, row_group_num_rows, path_in_schema, type,
//     compression, num_values, stats_null_count, ...), and a last line {"kv": {key: value}}.
// Value conventions (shared with read_with_arrow.mjs so outputs can be compared line by line):
// int64/bigint as exact JSON integers (never through a double); floats as the shortest text
// that round-trips the double (a float32 is printed as its exact double value); NaN and
// +-infinity as the strings "NaN", "Infinity", "-Infinity"; lists (also fixed-size arrays) as
// arrays; structs and maps as objects; blobs as UTF-8 decoded strings; NULL as null.
import { DuckDBInstance } from '@duckdb/node-api';

function toJson(v) {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'bigint': return v.toString();
    case 'number':
      if (Number.isNaN(v)) return '"NaN"';
      if (v === Infinity) return '"Infinity"';
      if (v === -Infinity) return '"-Infinity"';
      return Object.is(v, -0) ? '-0' : String(v);
    case 'boolean': return v ? 'true' : 'false';
    case 'string': return JSON.stringify(v);
  }
  if (v instanceof Uint8Array) return JSON.stringify(Buffer.from(v).toString('utf8'));
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return '[' + Array.from(v, toJson).join(',') + ']';
  if (typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ':' + toJson(x)).join(',') + '}';
  }
  return JSON.stringify(String(v));
}

const args = process.argv.slice(2);
const meta = args.includes('--meta');
const file = args.find((a) => a !== '--meta');
if (!file) {
  process.stderr.write('usage: node read_with_duckdb.mjs [--meta] FILE.parquet\n');
  process.exit(2);
}
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
const quoted = `'${file.replaceAll("'", "''")}'`;
if (meta) {
  const md = await con.runAndReadAll(`select * from parquet_metadata(${quoted}) order by row_group_id, column_id`);
  const mnames = md.columnNames();
  for (const row of md.getRowsJS()) {
    process.stdout.write('{' + mnames.map((n, i) => JSON.stringify(n) + ':' + toJson(row[i])).join(',') + '}\n');
  }
  const kv = await con.runAndReadAll(`select decode(key) k, decode(value) v from parquet_kv_metadata(${quoted})`);
  const o = {};
  for (const [k, v] of kv.getRowsJS()) o[k] = v;
  process.stdout.write(JSON.stringify({ kv: o }) + '\n');
  process.exit(0);
}
const reader = await con.runAndReadAll(`select * from read_parquet(${quoted})`);
const names = reader.columnNames();
const out = [];
for (const row of reader.getRowsJS()) {
  out.push('{' + names.map((n, i) => JSON.stringify(n) + ':' + toJson(row[i])).join(',') + '}');
  if (out.length >= 4096) { process.stdout.write(out.join('\n') + '\n'); out.length = 0; }
}
if (out.length) process.stdout.write(out.join('\n') + '\n');
