// dump_duckdb.mjs FILE [--columns a,b] [--offset N] [--limit N] [--with-id-key KEY] [--types-out F]
//
// The DuckDB side of the reader oracle: reads FILE with DuckDB's own parquet reader and prints the
// rows as JSON lines in the format `vforge cat` promises (DESIGN.md "cat"): column names as keys in
// schema order; FLOAT with 9 significant digits, DOUBLE with 17 (%.9g / %.17g); integers exact;
// NaN/±inf as "NaN"/"Infinity"/"-Infinity"; NULL as null; strings as strings; lists as arrays;
// structs as objects; maps as objects with stringified keys; DATE "YYYY-MM-DD"; TIMESTAMP (and INT96,
// which DuckDB reads as TIMESTAMP) "YYYY-MM-DD HH:MM:SS[.ffffff]"; DECIMAL as an exact number;
// binary (BLOB, GEOMETRY WKB) as base64; VARIANT as its JSON (DuckDB's cast).
// --with-id-key KEY adds "__id__" = make_point_id(KEY, file_row_number), computed with DuckDB's md5
// (an implementation independent of vforge's).
// --types-out F writes the column type tree (f32/f64/int/dec/str/bool/date/ts/time/other, list,
// struct, map) so compare_jsonl.mjs compares float32 columns as float32 and doubles exactly.
// Exit status: 0 ok; 3 DuckDB could not read the file (message on stderr); 2 usage.
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { fmtFloat, fmtTimestamp, fmtClock, fmtDecimal, civilFromDays, bytesToBase64 } from './jsonl_lib.mjs';

const T = DuckDBTypeId;
// kind tree of a DuckDB type, as compare_jsonl.mjs understands it
function kindOf(t) {
  switch (t.typeId) {
    case T.FLOAT: return 'f32';
    case T.DOUBLE: return 'f64';
    case T.TINYINT: case T.SMALLINT: case T.INTEGER: case T.BIGINT: case T.HUGEINT:
    case T.UTINYINT: case T.USMALLINT: case T.UINTEGER: case T.UBIGINT: case T.UHUGEINT: return 'int';
    case T.DECIMAL: return 'dec';
    case T.BOOLEAN: return 'bool';
    case T.VARCHAR: case T.ENUM: case T.UUID: return 'str';
    case T.BLOB: case T.GEOMETRY: return 'str';
    case T.DATE: return 'date';
    case T.TIMESTAMP: case T.TIMESTAMP_S: case T.TIMESTAMP_MS: case T.TIMESTAMP_NS: case T.TIMESTAMP_TZ: return 'ts';
    case T.TIME: case T.TIME_NS: case T.TIME_TZ: return 'time';
    case T.LIST: case T.ARRAY: return { list: kindOf(t.valueType) };
    case T.STRUCT: return { struct: t.entryNames.map((n, i) => [n, kindOf(t.entryTypes[i])]) };
    case T.MAP: return { map: kindOf(t.valueType) };
    default: return 'other';
  }
}

const q = (s) => '"' + s.replace(/"/g, '""') + '"';
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

// render one DuckDB value of type t as a JSON token
function render(v, t) {
  if (v === null || v === undefined) return 'null';
  switch (t.typeId) {
    case T.FLOAT: return fmtFloat(v, 9);
    case T.DOUBLE: return fmtFloat(v, 17);
    case T.BOOLEAN: return v ? 'true' : 'false';
    case T.TINYINT: case T.SMALLINT: case T.INTEGER: case T.BIGINT: case T.HUGEINT:
    case T.UTINYINT: case T.USMALLINT: case T.UINTEGER: case T.UBIGINT: case T.UHUGEINT:
      return String(v);
    case T.DECIMAL: return fmtDecimal(BigInt(v.value), v.scale);
    case T.ENUM: return JSON.stringify(String(v));
    case T.UUID: return JSON.stringify(v.toString());
    case T.BLOB: return JSON.stringify(bytesToBase64(v.bytes));
    case T.GEOMETRY: return JSON.stringify(bytesToBase64(v.bytes)); // WKB, as stored
    case T.VARCHAR: return JSON.stringify(v);
    case T.DATE: return JSON.stringify(civilFromDays(v.days));
    case T.TIMESTAMP: case T.TIMESTAMP_TZ: return JSON.stringify(fmtTimestamp(BigInt(v.micros), 1000000n));
    case T.TIMESTAMP_MS: return JSON.stringify(fmtTimestamp(BigInt(v.millis), 1000n));
    case T.TIMESTAMP_S: return JSON.stringify(fmtTimestamp(BigInt(v.seconds), 1n));
    case T.TIMESTAMP_NS: return JSON.stringify(fmtTimestamp(BigInt(v.nanos), 1000000000n));
    case T.TIME: { const m = BigInt(v.micros); return JSON.stringify(fmtClock(m / 1000000n, m % 1000000n, 1000000n)); }
    case T.LIST: case T.ARRAY: return '[' + v.items.map((x) => render(x, t.valueType)).join(',') + ']';
    case T.STRUCT:
      return '{' + t.entryNames.map((n, i) => JSON.stringify(n) + ':' + render(v.entries[n], t.entryTypes[i])).join(',') + '}';
    case T.MAP:
      return '{' + v.entries.map((e) => JSON.stringify(mapKey(e.key, t.keyType)) + ':' + render(e.value, t.valueType)).join(',') + '}';
    default: return JSON.stringify(String(v));
  }
}
function mapKey(k, t) {
  if (k === null || k === undefined) return 'null';
  const r = render(k, t);
  return r.startsWith('"') ? JSON.parse(r) : r;
}

/*! duckdbDump(con, file, opts) : rows of `file` as JSON-lines text (array of lines without '\n')
 *  and the type tree {columns: [[name, kind], ...]}.  opts: {columns, offset, limit, idKey}.
 *  Throws DuckDB's error when it cannot read the file. */
export async function duckdbDump(con, file, opts = {}) {
  const { columns = null, offset = 0, limit = null, idKey = null } = opts;
  const src = `read_parquet(${lit(file)}${idKey !== null ? ', file_row_number = true' : ''})`;
  // top-level VARIANT columns are selected as JSON text (DuckDB's VARIANT -> JSON cast), which
  // render() passes through: vforge prints variants as JSON
  const probe = await con.runAndReadAll(`select * from read_parquet(${lit(file)}) limit 0`);
  // (a column holding a VARIANT deeper down is cast as a whole: fine for integers and strings
  // beside it, which DuckDB's JSON spells as vforge does)
  const all = probe.columnNames(), variant = new Set(all.filter((n, i) => probe.columnTypes()[i].toString().includes('VARIANT')));
  const pick = (n) => variant.has(n) ? `${q(n)}::JSON as ${q(n)}` : q(n);
  let sel;
  if (columns) sel = columns.map(pick).join(', ');
  else sel = all.map(pick).join(', ');
  if (idKey !== null) {
    const h = `md5(${lit(idKey + ':')} || file_row_number::VARCHAR)`;
    sel = `substr(${h},1,8)||'-'||substr(${h},9,4)||'-'||substr(${h},13,4)||'-'||substr(${h},17,4)||'-'||substr(${h},21,12) as "__id__", ` + sel;
  }
  let sql = `select ${sel} from ${src}`;
  if (idKey !== null) sql += ' order by file_row_number';
  if (limit !== null) sql += ` limit ${limit}`;
  if (offset) sql += ` offset ${offset}`;
  const reader = await con.runAndReadAll(sql);
  const names = reader.columnNames(), types = reader.columnTypes();
  const keys = names.map((n) => JSON.stringify(n) + ':');
  const isVariant = names.map((n) => variant.has(n)); // JSON text, passed through
  const lines = [];
  for (const row of reader.getRows()) {
    let line = '{';
    for (let i = 0; i < row.length; i++)
      line += (i ? ',' : '') + keys[i] + (isVariant[i] ? (row[i] === null ? 'null' : row[i]) : render(row[i], types[i]));
    lines.push(line + '}');
  }
  return { lines, types: { columns: names.map((n, i) => [n, kindOf(types[i])]) } };
}

/*! duckdbConnect() : a single-threaded in-memory DuckDB connection (file order is kept). */
export async function duckdbConnect() {
  const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
  const con = await inst.connect();
  // GeoParquet columns stay WKB bytes (vforge prints binary as a string), not converted geometries
  await con.run('SET enable_geoparquet_conversion = false');
  return con;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  let file = null, columns = null, offset = 0, limit = null, idKey = null, typesOut = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--columns') columns = args[++i].split(',');
    else if (a === '--offset') offset = parseInt(args[++i], 10);
    else if (a === '--limit') limit = parseInt(args[++i], 10);
    else if (a === '--with-id-key') idKey = args[++i];
    else if (a === '--types-out') typesOut = args[++i];
    else if (!file) file = a;
    else { console.error(`dump_duckdb: unexpected argument ${a}`); process.exit(2); }
  }
  if (!file) { console.error('usage: node dump_duckdb.mjs FILE [--columns a,b] [--offset N] [--limit N] [--with-id-key KEY] [--types-out F]'); process.exit(2); }
  try {
    const r = await duckdbDump(await duckdbConnect(), file, { columns, offset, limit, idKey });
    if (typesOut) fs.writeFileSync(typesOut, JSON.stringify(r.types) + '\n');
    for (let i = 0; i < r.lines.length; i += 4096) fs.writeSync(1, r.lines.slice(i, i + 4096).join('\n') + '\n');
  } catch (e) {
    console.error(`dump_duckdb: DuckDB cannot read ${file}: ${e.message || e}`);
    process.exit(3);
  }
}
