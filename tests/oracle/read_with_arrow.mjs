// Oracle reader: prints every row of a parquet file, as arrow-rs (parquet-wasm) reads it into an
// apache-arrow table, as one JSON object per line on stdout (column names as keys, schema order).
//   node read_with_arrow.mjs FILE.parquet
// Value conventions are those of read_with_duckdb.mjs: int64 as exact JSON integers; floats as
// the shortest text that round-trips the double (float32 printed as its exact double value);
// NaN/+-infinity as "NaN", "Infinity", "-Infinity"; lists and fixed-size lists as arrays;
// structs as objects; binary as UTF-8 decoded strings; NULL as null.
// With --schema, the arrow schema (field names and types) is printed to stderr first.
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import fs from 'fs';

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
  if (v instanceof arrow.Vector) return '[' + Array.from(v, toJson).join(',') + ']';
  if (typeof v === 'object') {
    const o = typeof v.toJSON === 'function' ? v.toJSON() : v;
    return '{' + Object.entries(o).map(([k, x]) => JSON.stringify(k) + ':' + toJson(x)).join(',') + '}';
  }
  return JSON.stringify(String(v));
}

const args = process.argv.slice(2);
const showSchema = args.includes('--schema');
const file = args.find((a) => a !== '--schema');
if (!file) {
  process.stderr.write('usage: node read_with_arrow.mjs [--schema] FILE.parquet\n');
  process.exit(2);
}
const wasmTable = pw.readParquet(new Uint8Array(fs.readFileSync(file)));
const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
if (showSchema) {
  for (const f of table.schema.fields) process.stderr.write(`${f.name}: ${f.type} nullable=${f.nullable}\n`);
}
const names = table.schema.fields.map((f) => f.name);
const cols = names.map((_, i) => table.getChildAt(i));
const out = [];
for (let r = 0; r < table.numRows; r++) {
  out.push('{' + names.map((n, i) => JSON.stringify(n) + ':' + toJson(cols[i].get(r))).join(',') + '}');
  if (out.length >= 4096) { process.stdout.write(out.join('\n') + '\n'); out.length = 0; }
}
if (out.length) process.stdout.write(out.join('\n') + '\n');
