// compare_jsonl.mjs A B [--types F] [--names a,b] [--max N] [--slice OFF:LIM] [--project a,b]
//
// Compares two JSON-lines row dumps structurally: A is normally `vforge cat`, B an oracle
// (dump_duckdb.mjs, dump_arrow.mjs, dump_hyparquet.mjs).  Numbers are compared by value, never by
// spelling: with the type tree from `dump_duckdb.mjs --types-out` (--types F), float32 values are
// equal when Math.fround of both agree (vforge prints %.9g), doubles when the parsed doubles agree
// (%.17g round-trips), integers exactly as BigInt (ids beyond 2^53), decimals as exact decimal text
// (or, failing that, equal doubles); timestamps/times textually after normalising the spelling
// ('T' or ' ', a UTC suffix, trailing zeros of the fraction).  Without a type, numbers compare as
// exact integers when both are integer text, else as doubles.  "NaN"/"Infinity"/"-Infinity" are
// strings on both sides.  Key order is checked (schema order); an "__id__" key may sit anywhere.
// Prints the first --max (default 20) differences as "row R key.path: a=… b=…", a per-column count,
// and exits 1 on any difference (0 when equal, 2 on usage or unreadable input).
// --slice OFF:LIM and --project a,b apply to B only: they cut the expected rows out of one full
// oracle dump (rows OFF..OFF+LIM-1; keys a,b in that order), so `vforge cat --offset/--limit/
// --columns` is checked without running the oracle again.
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseJson, JNum, JObj, show, normDecimal } from './jsonl_lib.mjs';

const isNonFinite = (v) => v === 'NaN' || v === 'Infinity' || v === '-Infinity';
function normTime(s) {
  let t = s.replace('T', ' ').replace(/(Z|[+-]00(:?00)?)$/, '');
  const m = /^(.*\d\d:\d\d:\d\d)(?:\.(\d+))?$/.exec(t);
  if (m) { const f = (m[2] || '').replace(/0+$/, ''); t = m[1] + (f ? '.' + f : ''); }
  return t;
}
function numEq(a, b, kind) {
  switch (kind) {
    case 'f32': return Math.fround(a.toNumber()) === Math.fround(b.toNumber());
    case 'f64': return a.toNumber() === b.toNumber();
    case 'int': return a.isInteger() && b.isInteger() && BigInt(a.text) === BigInt(b.text);
    case 'dec': {
      const x = normDecimal(a.text), y = normDecimal(b.text);
      return (x !== null && x === y) || a.toNumber() === b.toNumber();
    }
    default:
      if (a.isInteger() && b.isInteger()) return BigInt(a.text) === BigInt(b.text);
      return a.toNumber() === b.toNumber();
  }
}

/*! compareLines(la, lb, opts) : compare row dumps (arrays of JSON-object lines).
 *  opts: {types: {columns: [[name, kind]]} | null, names: [a, b], max, slice: [off, lim] | null,
 *  project: [keys] | null} (slice/project apply to lb).
 *  @return : {ndiff, rows, lines: [report lines]} — ndiff 0 means equal. */
export function compareLines(la, lb, opts = {}) {
  const { types = null, names = ['A', 'B'], max = 20, slice = null, project = null } = opts;
  const colTypes = new Map(types ? types.columns : []);
  if (slice) lb = lb.slice(slice[0], slice[0] + slice[1]);
  const diffs = [];
  const perColumn = new Map();
  let ndiff = 0;
  function report(row, p, a, b, why) {
    ndiff++;
    const col = p.split(/[.[]/)[0];
    const c = perColumn.get(col) || { values: 0, rows: new Set(), first: row };
    c.values++; c.rows.add(row); perColumn.set(col, c);
    if (diffs.length < max) diffs.push(`row ${row} ${p}: ${names[0]}=${show(a)} ${names[1]}=${show(b)}${why ? ' (' + why + ')' : ''}`);
  }
  function cmp(row, p, a, b, kind) {
    if (a === null || b === null) { if (a !== b) report(row, p, a, b); return; }
    if (a instanceof JNum || b instanceof JNum) {
      if (a instanceof JNum && b instanceof JNum) { if (!numEq(a, b, typeof kind === 'string' ? kind : null)) report(row, p, a, b); }
      else report(row, p, a, b, 'number vs non-number');
      return;
    }
    if (typeof a === 'string' && typeof b === 'string') {
      if (kind === 'ts' || kind === 'time') { if (normTime(a) !== normTime(b)) report(row, p, a, b); }
      else if (a !== b) report(row, p, a, b, isNonFinite(a) || isNonFinite(b) ? '' : undefined);
      return;
    }
    if (typeof a === 'boolean' || typeof b === 'boolean') { if (a !== b) report(row, p, a, b); return; }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) { report(row, p, a, b, `length ${a.length} vs ${b.length}`); return; }
      const ek = kind && kind.list !== undefined ? kind.list : null;
      for (let i = 0; i < a.length; i++) cmp(row, `${p}[${i}]`, a[i], b[i], ek);
      return;
    }
    if (a instanceof JObj && b instanceof JObj) {
      const ka = a.entries.map((e) => e[0]), kb = b.entries.map((e) => e[0]);
      if (ka.join('\u0000') !== kb.join('\u0000')) { report(row, p, a, b, `keys [${ka}] vs [${kb}]`); return; }
      for (let i = 0; i < a.entries.length; i++) {
        let ek = null;
        if (kind && kind.map !== undefined) ek = kind.map;
        else if (kind && kind.struct) { const f = kind.struct.find((s) => s[0] === ka[i]); ek = f ? f[1] : null; }
        cmp(row, `${p}.${ka[i]}`, a.entries[i][1], b.entries[i][1], ek);
      }
      return;
    }
    report(row, p, a, b, 'different JSON types');
  }
  const n = Math.min(la.length, lb.length);
  for (let r = 0; r < n; r++) {
    let a, b;
    try { a = parseJson(la[r]); } catch (e) { report(r, '<line>', la[r], null, `${names[0]} line is not JSON: ${e.message}`); continue; }
    try { b = parseJson(lb[r]); } catch (e) { report(r, '<line>', null, lb[r], `${names[1]} line is not JSON: ${e.message}`); continue; }
    if (project && b instanceof JObj) b = new JObj(project.map((k) => b.entries.find((e) => e[0] === k) || [k, '<absent>']));
    if (!(a instanceof JObj) || !(b instanceof JObj)) { report(r, '<line>', a, b, 'a row must be a JSON object'); continue; }
    const ida = a.entries.find((e) => e[0] === '__id__'), idb = b.entries.find((e) => e[0] === '__id__');
    if (ida || idb) {
      cmp(r, '__id__', ida ? ida[1] : '<absent>', idb ? idb[1] : '<absent>', 'str');
      a = new JObj(a.entries.filter((e) => e[0] !== '__id__'));
      b = new JObj(b.entries.filter((e) => e[0] !== '__id__'));
    }
    const ka = a.entries.map((e) => e[0]), kb = b.entries.map((e) => e[0]);
    if (ka.join('\u0000') !== kb.join('\u0000')) { report(r, '<keys>', ka.join(','), kb.join(','), 'columns or their order differ'); continue; }
    for (let i = 0; i < a.entries.length; i++) cmp(r, ka[i], a.entries[i][1], b.entries[i][1], colTypes.get(ka[i]) ?? null);
  }
  if (la.length !== lb.length) {
    ndiff++;
    diffs.push(`row count: ${names[0]}=${la.length} ${names[1]}=${lb.length}`);
  }
  const lines = [...diffs];
  for (const [col, c] of perColumn) lines.push(`column ${col}: ${c.values} values differ in ${c.rows.size} rows (first row ${c.first})`);
  return { ndiff, rows: n, lines };
}

/*! splitLines(text) : JSON-lines text -> array of lines (no trailing empty line). */
export function splitLines(t) {
  const lines = t.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  let fa = null, fb = null, typesFile = null, names = ['A', 'B'], max = 20, slice = null, project = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--types') typesFile = args[++i];
    else if (a === '--names') names = args[++i].split(',');
    else if (a === '--max') max = parseInt(args[++i], 10);
    else if (a === '--slice') slice = args[++i].split(':').map((x) => parseInt(x, 10));
    else if (a === '--project') project = args[++i].split(',');
    else if (!fa) fa = a;
    else if (!fb) fb = a;
    else { console.error(`compare_jsonl: unexpected argument ${a}`); process.exit(2); }
  }
  if (!fa || !fb) { console.error('usage: node compare_jsonl.mjs A B [--types F] [--names a,b] [--max N] [--slice OFF:LIM] [--project a,b]'); process.exit(2); }
  let la, lb, types = null;
  try {
    la = splitLines(fs.readFileSync(fa, 'utf8')); lb = splitLines(fs.readFileSync(fb, 'utf8'));
    if (typesFile) types = JSON.parse(fs.readFileSync(typesFile, 'utf8'));
  } catch (e) { console.error(`compare_jsonl: ${e.message}`); process.exit(2); }
  const r = compareLines(la, lb, { types, names, max, slice, project });
  if (r.ndiff === 0) { console.log(`equal: ${r.rows} rows`); process.exit(0); }
  console.log(`DIFFERENT: ${r.ndiff} differences over ${r.rows} compared rows (${names[0]}=${fa}, ${names[1]}=${fb})`);
  for (const l of r.lines) console.log('  ' + l);
  process.exit(1);
}
