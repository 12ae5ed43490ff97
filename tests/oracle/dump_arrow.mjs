// dump_arrow.mjs FILE [--columns a,b] [--offset N] [--limit N] [--types-out F]
//
// The arrow-rs side of the reader oracle, for files DuckDB cannot read (Hadoop-framed LZ4,
// BYTE_STREAM_SPLIT on INT32/INT64/FLBA/decimal, a MAP without a value column, ...): parquet-wasm
// (arrow-rs compiled to wasm) decodes FILE into Arrow, and apache-arrow (JS) walks the values.
// Output: the same JSON-lines format as dump_duckdb.mjs / `vforge cat` (see there), and the same
// --types-out tree for compare_jsonl.mjs.  Timestamps are read from the raw int64 buffers (the JS
// accessor rounds them through a double).
// Exit status: 0 ok; 3 arrow-rs could not read the file; 2 usage.
import * as pw from 'parquet-wasm';
import * as arrow from 'apache-arrow';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { fmtFloat, fmtTimestamp, fmtClock, fmtDecimal, civilFromDays, bytesToBase64 } from './jsonl_lib.mjs';

const Ty = arrow.Type;
function kindOf(t) {
  switch (t.typeId) {
    case Ty.Float: return t.precision === arrow.Precision.DOUBLE ? 'f64' : 'f32';
    case Ty.Int: return 'int';
    case Ty.Decimal: return 'dec';
    case Ty.Bool: return 'bool';
    case Ty.Utf8: case Ty.LargeUtf8: case Ty.Binary: case Ty.LargeBinary: case Ty.FixedSizeBinary: return 'str';
    case Ty.Date: return 'date';
    case Ty.Timestamp: return 'ts';
    case Ty.Time: return 'time';
    case Ty.List: case Ty.FixedSizeList: return { list: kindOf(t.children[0].type) };
    case Ty.Struct: return { struct: t.children.map((c) => [c.name, kindOf(c.type)]) };
    case Ty.Map: return { map: kindOf(t.children[0].type.children[1].type) };
    default: return 'other';
  }
}
const perSecond = (unit) => [1n, 1000n, 1000000n, 1000000000n][unit];
function decimalOf(words) {
  let v = 0n;
  for (let k = words.length - 1; k >= 0; k--) v = (v << 32n) | BigInt(words[k] >>> 0);
  const bits = BigInt(words.length * 32);
  if (v >> (bits - 1n)) v -= 1n << bits;
  return v;
}
// render a value obtained from the arrow JS accessor (`raw` = exact int64 ticks for timestamps)
function render(v, t, raw) {
  if (v === null || v === undefined) return 'null';
  switch (t.typeId) {
    case Ty.Float: return fmtFloat(Number(v), t.precision === arrow.Precision.DOUBLE ? 17 : 9);
    case Ty.Int: return String(v);
    case Ty.Decimal: return fmtDecimal(decimalOf(v), t.scale);
    case Ty.Bool: return v ? 'true' : 'false';
    case Ty.Utf8: case Ty.LargeUtf8: return JSON.stringify(v);
    case Ty.Binary: case Ty.LargeBinary: case Ty.FixedSizeBinary: return JSON.stringify(bytesToBase64(v));
    case Ty.Date: return JSON.stringify(civilFromDays(Math.floor(Number(v) / 86400000)));
    case Ty.Timestamp: {
      const ps = perSecond(t.unit);
      const ticks = raw !== undefined ? BigInt(raw) : BigInt(Math.round(Number(v) * Number(ps) / 1000));
      return JSON.stringify(fmtTimestamp(ticks, ps));
    }
    case Ty.Time: {
      const ps = perSecond(t.unit), x = BigInt(raw !== undefined ? raw : v);
      return JSON.stringify(fmtClock(x / ps, x % ps, ps));
    }
    case Ty.List: case Ty.FixedSizeList: {
      const et = t.children[0].type, out = [];
      for (let j = 0; j < v.length; j++) out.push(render(v.get(j), et));
      return '[' + out.join(',') + ']';
    }
    case Ty.Struct:
      return '{' + t.children.map((c) => JSON.stringify(c.name) + ':' + render(v[c.name], c.type)).join(',') + '}';
    case Ty.Map: {
      const kt = t.children[0].type.children[0].type, vt = t.children[0].type.children[1].type, out = [];
      for (const [k, x] of v) {
        const kr = render(k, kt);
        out.push(JSON.stringify(kr.startsWith('"') ? JSON.parse(kr) : kr) + ':' + render(x, vt));
      }
      return '{' + out.join(',') + '}';
    }
    default: return JSON.stringify(String(v));
  }
}

/*! arrowDump(file, opts) : like duckdbDump() (dump_duckdb.mjs), read by arrow-rs.  opts:
 *  {columns, offset, limit}.  Throws when arrow-rs cannot read the file. */
export function arrowDump(file, opts = {}) {
  const { columns = null, offset = 0, limit = null } = opts;
  const table = arrow.tableFromIPC(pw.readParquet(fs.readFileSync(file)).intoIPCStream());
  const fields = columns ? columns.map((c) => {
    const f = table.schema.fields.find((x) => x.name === c);
    if (!f) throw new Error(`no column ${c}`);
    return f;
  }) : table.schema.fields;
  const vecs = fields.map((f) => table.getChild(f.name));
  // raw int64 accessors for top-level timestamps / times
  const rawAt = vecs.map((vec, c) => {
    const id = fields[c].type.typeId;
    if (id !== Ty.Timestamp && id !== Ty.Time) return null;
    const starts = []; let s = 0;
    for (const d of vec.data) { starts.push(s); s += d.length; }
    return (i) => {
      let k = starts.length - 1; while (starts[k] > i) k--;
      const d = vec.data[k];
      return d.values[d.offset + (i - starts[k])];
    };
  });
  const end = limit === null ? table.numRows : Math.min(table.numRows, offset + limit);
  const keys = fields.map((f) => JSON.stringify(f.name) + ':');
  const lines = [];
  for (let r = offset; r < end; r++) {
    let line = '{';
    for (let c = 0; c < fields.length; c++) {
      const v = vecs[c].get(r);
      line += (c ? ',' : '') + keys[c] + render(v, fields[c].type, rawAt[c] && v !== null ? rawAt[c](r) : undefined);
    }
    lines.push(line + '}');
  }
  return { lines, types: { columns: fields.map((f) => [f.name, kindOf(f.type)]) } };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  let file = null, columns = null, offset = 0, limit = null, typesOut = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--columns') columns = args[++i].split(',');
    else if (a === '--offset') offset = parseInt(args[++i], 10);
    else if (a === '--limit') limit = parseInt(args[++i], 10);
    else if (a === '--types-out') typesOut = args[++i];
    else if (!file) file = a;
    else { console.error(`dump_arrow: unexpected argument ${a}`); process.exit(2); }
  }
  if (!file) { console.error('usage: node dump_arrow.mjs FILE [--columns a,b] [--offset N] [--limit N] [--types-out F]'); process.exit(2); }
  try {
    const r = arrowDump(file, { columns, offset, limit });
    if (typesOut) fs.writeFileSync(typesOut, JSON.stringify(r.types) + '\n');
    for (let i = 0; i < r.lines.length; i += 4096) fs.writeSync(1, r.lines.slice(i, i + 4096).join('\n') + '\n');
  } catch (e) {
    console.error(`dump_arrow: arrow-rs cannot read ${file}: ${e.message || e}`);
    process.exit(3);
  }
}
