// oracle_check.mjs PLAN --vforge BIN [--tmp DIR] [--timeout S]
//
// Runs `vforge cat` over a list of parquet files and holds each result against its expectation.
// Driven by tests/format/test_fixtures.sh and test_conformance.sh, which keep the per-file
// expectations in one readable table and write it to PLAN; this runner does the work in one process
// (one DuckDB instance for all files) so a hundred files take seconds, not a node start-up each.
//
// PLAN: one file per line, tab-separated, '#' comments:
//   FILE  EXPECT  ORACLE  CHECKS  NOTE
// EXPECT  read   : exit 0, rows equal to the oracle's
//         reject : exit 2 and the message on stderr names the file (its base name)
//         either : exit 0 or 2 (2 with the file named); when 0 and ORACLE is not `none`, rows compared
// ORACLE  auto (DuckDB, else arrow-rs) | duckdb | arrow | none
// CHECKS  ';'-separated list or '-': `slices` also checks --columns (2nd and last column, in both
//         orders), --offset/--limit (at OFFSET if given as slices=OFFSET, else the middle) and an
//         offset past the end; `ignore=a|b` leaves top-level columns a and b out of the comparison;
//         `fix=ROW/COL/JSON` replaces the oracle's value of column COL in row ROW with JSON, where the
//         oracle is verified wrong or renders differently (NOTE says why); `cross` also holds
//         arrow-rs against DuckDB when both read the file (proves the oracles agree, so a mismatch
//         is vforge's)
// Any run that crashes (signal, exit >= 128, a sanitizer report) or hangs (--timeout, default 60 s)
// fails whatever EXPECT says.  Prints one line per file, details under failures, and totals;
// exit 1 if any file failed.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { duckdbConnect, duckdbDump } from './dump_duckdb.mjs';
import { arrowDump } from './dump_arrow.mjs';
import { compareLines, splitLines } from './compare_jsonl.mjs';
import { parseJson, JObj } from './jsonl_lib.mjs';

const args = process.argv.slice(2);
let planFile = null, vforge = null, tmp = null, timeoutS = 60;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--vforge') vforge = args[++i];
  else if (args[i] === '--tmp') tmp = args[++i];
  else if (args[i] === '--timeout') timeoutS = parseFloat(args[++i]);
  else planFile = args[i];
}
if (!planFile || !vforge) { console.error('usage: node oracle_check.mjs PLAN --vforge BIN [--tmp DIR] [--timeout S]'); process.exit(2); }
if (tmp) fs.mkdirSync(tmp, { recursive: true });

const plan = fs.readFileSync(planFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => {
  const [file, expect = 'read', oracle = 'auto', checks = '-', note = ''] = l.split('\t');
  return { file, expect, oracle, checks: checks === '-' ? [] : checks.split(';'), note };
});

function runCat(file, extra) {
  const r = spawnSync(vforge, ['cat', file, ...extra], { maxBuffer: 1 << 30, timeout: timeoutS * 1000, encoding: 'utf8' });
  const stderr = r.stderr || '';
  const crash = r.signal !== null || (r.status !== null && r.status >= 128) ||
    /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:/.test(stderr);
  return { status: r.status, signal: r.signal, stdout: r.stdout || '', stderr, crash, timedOut: r.error && r.error.code === 'ETIMEDOUT' };
}
const why = (r) => r.timedOut ? `timed out after ${timeoutS} s` : r.crash ? `CRASH (${r.signal ? 'signal ' + r.signal : 'exit ' + r.status}): ${r.stderr.slice(0, 800)}`
  : `exit ${r.status}: ${r.stderr.trim().slice(0, 500)}`;
function dropKeys(lines, keys) {
  if (!keys.length) return lines;
  return lines.map((l) => {
    let v;
    try { v = parseJson(l); } catch { return l; }
    if (!(v instanceof JObj)) return l;
    return '{' + v.entries.filter((e) => !keys.includes(e[0])).map((e) => JSON.stringify(e[0]) + ':' + reJson(e[1])).join(',') + '}';
  });
}
function reJson(v) {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return '[' + v.map(reJson).join(',') + ']';
  if (v instanceof JObj) return '{' + v.entries.map(([k, x]) => JSON.stringify(k) + ':' + reJson(x)).join(',') + '}';
  return v.text;
}

let con = null;
async function oracleDump(file, which) {
  const errs = [];
  if (which === 'auto' || which === 'duckdb') {
    try {
      if (!con) con = await duckdbConnect();
      return { name: 'duckdb', ...(await duckdbDump(con, file)) };
    } catch (e) { errs.push(`DuckDB: ${String(e.message || e).split('\n')[0]}`); if (which === 'duckdb') throw new Error(errs.join('; ')); }
  }
  try { return { name: 'arrow', ...arrowDump(file) }; } catch (e) { errs.push(`arrow-rs: ${String(e.message || e).split('\n')[0]}`); }
  throw new Error(errs.join('; '));
}

let pass = 0, fail = 0;
const failed = [];
for (const p of plan) {
  const label = p.file.includes('/parquet-testing/') ? p.file.replace(/^.*\/parquet-testing\//, '') : path.basename(p.file);
  const base = path.basename(p.file);
  const detail = [];
  let ok = true, summary = '';
  const ignore = (p.checks.find((c) => c.startsWith('ignore=')) || 'ignore=').slice(7).split('|').filter(Boolean);
  const r = runCat(p.file, []);
  if (r.crash || r.timedOut) { ok = false; detail.push(why(r)); }
  else if (p.expect === 'reject') {
    if (r.status !== 2) { ok = false; detail.push(`expected exit 2 (rejected), got ${why(r)}; stdout ${r.stdout.length} bytes`); }
    else if (!r.stderr.includes(base)) { ok = false; detail.push(`rejected, but the message does not name ${base}: ${r.stderr.trim()}`); }
    else summary = `rejected: ${r.stderr.trim().split('\n').pop().slice(0, 160)}`;
  } else if (p.expect === 'either' && r.status === 2) {
    if (!r.stderr.includes(base)) { ok = false; detail.push(`rejected, but the message does not name ${base}: ${r.stderr.trim()}`); }
    else summary = `rejected (allowed): ${r.stderr.trim().split('\n').pop().slice(0, 160)}`;
  } else if (r.status !== 0) {
    ok = false; detail.push(`expected exit 0${p.expect === 'either' ? ' or 2' : ''}, got ${why(r)}`);
  } else if (p.oracle === 'none') {
    summary = `read ${splitLines(r.stdout).length} rows (no oracle)`;
  } else {
    let o = null;
    try { o = await oracleDump(p.file, p.oracle); } catch (e) { ok = false; detail.push(`no oracle could read it: ${e.message}`); }
    if (o) {
      for (const fx of p.checks.filter((c) => c.startsWith('fix='))) {
        const m = /^fix=(\d+)\/([^/]+)\/(.*)$/.exec(fx);
        const row = m ? parseInt(m[1], 10) : -1;
        if (!m || row >= o.lines.length) { ok = false; detail.push(`bad fix in the plan: ${fx}`); continue; }
        const v = parseJson(o.lines[row]);
        const e = v.entries.find((x) => x[0] === m[2]);
        if (!e) { ok = false; detail.push(`fix: no column ${m[2]}`); continue; }
        e[1] = parseJson(m[3]);
        o.lines[row] = reJson(v);
      }
      const got = splitLines(r.stdout);
      if (tmp) {
        fs.writeFileSync(path.join(tmp, base + '.vforge.jsonl'), r.stdout);
        fs.writeFileSync(path.join(tmp, base + `.${o.name}.jsonl`), o.lines.join('\n') + (o.lines.length ? '\n' : ''));
      }
      const names = ['vforge', o.name];
      const cmp = (what, a, b, extra = {}) => {
        const c = compareLines(dropKeys(a, ignore), dropKeys(b, ignore), { types: o.types, names, max: 8, ...extra });
        if (c.ndiff) { ok = false; detail.push(`${what}: ${c.ndiff} differences`); for (const l of c.lines) detail.push('  ' + l); }
      };
      cmp('all rows', got, o.lines);
      const n = o.lines.length;
      if (p.checks.some((c) => c === 'slices' || c.startsWith('slices='))) {
        const cols = o.types.columns.map((c) => c[0]);
        const sel = cols.length >= 3 ? [cols[1], cols[cols.length - 1]] : cols.slice(-1);
        const sopt = p.checks.find((c) => c.startsWith('slices='));
        const off = sopt ? parseInt(sopt.slice(7), 10) : Math.max(0, Math.floor(n / 2) - 1);
        const runs = [
          { what: `--columns ${sel}`, extra: ['--columns', sel.join(',')], cmp: { project: sel } },
          // keys follow the order asked for (as a SQL select list)
          { what: `--columns ${[...sel].reverse()} --limit 100`, extra: ['--columns', [...sel].reverse().join(','), '--limit', '100'],
            cmp: { project: [...sel].reverse(), slice: [0, 100] } },
          { what: `--offset ${off} --limit 7`, extra: ['--offset', String(off), '--limit', '7'], cmp: { slice: [off, 7] } },
          { what: `--offset ${Math.max(0, n - 2)} --limit 10 --columns ${sel}`, extra: ['--offset', String(Math.max(0, n - 2)), '--limit', '10', '--columns', sel.join(',')],
            cmp: { slice: [Math.max(0, n - 2), 10], project: sel } },
          { what: `--offset ${n + 5}`, extra: ['--offset', String(n + 5)], cmp: { slice: [n + 5, 1] } },
        ];
        for (const s of runs) {
          const rs = runCat(p.file, s.extra);
          if (rs.crash || rs.timedOut || rs.status !== 0) { ok = false; detail.push(`${s.what}: ${why(rs)}`); continue; }
          cmp(s.what, splitLines(rs.stdout), o.lines, s.cmp);
        }
      }
      let crossNote = '';
      if (p.checks.includes('cross') && o.name === 'duckdb') {
        let a = null;
        try { a = arrowDump(p.file); } catch (e) { crossNote = `; arrow-rs cannot read it (${String(e.message || e).split('\n')[0].slice(0, 80)})`; }
        if (a) {
          const c = compareLines(a.lines, o.lines, { types: o.types, names: ['arrow', 'duckdb'], max: 5 });
          if (c.ndiff) { ok = false; detail.push(`the oracles disagree (arrow-rs vs DuckDB): ${c.ndiff} differences`); for (const l of c.lines) detail.push('  ' + l); }
          else crossNote = '; = arrow-rs too';
        }
      }
      summary = `read ${n} rows = ${o.name}${crossNote}${p.checks.some((c) => c.startsWith('slices')) ? ' (+ columns/offset/limit slices)' : ''}`;
    }
  }
  if (ok) { pass++; console.log(`ok   ${label}: ${summary}${p.note ? ' [' + p.note + ']' : ''}`); }
  else {
    fail++; failed.push(label);
    console.log(`FAIL ${label} (expected: ${p.expect})${p.note ? ' [' + p.note + ']' : ''}`);
    for (const d of detail) console.log('     ' + d);
  }
}
console.log(`totals: ${pass} passed, ${fail} failed, ${plan.length} files`);
if (fail) console.log(`failed: ${failed.join(' ')}`);
process.exit(fail ? 1 : 0);
