// Compares the stand-in's dump of a collection (GET /__standin/dump, JSON lines) point by point
// with the corpus as `vforge cat --with-id '<id expr>'` prints it (JSON lines, the id in
// "__id__"): the same ids, each once; every vector float32-equal (dense arrays, sparse
// {indices, values}, multivectors [[...]]); payloads equal to what the loader builds (KEY from
// COLUMN, null values omitted, a string holding a JSON object unpacked; numbers compared as
// float32 when they differ as doubles). An empty sparse vector may be sent or left out.
// usage: node check_dump.mjs CORPUS.jsonl DUMP.jsonl --vec NAME=COLUMN:dense|sparse|multi ...
//                            [--payload KEY=COLUMN ...]
import { readFileSync } from 'node:fs';

const [corpusPath, dumpPath, ...rest] = process.argv.slice(2);
const vecs = [], payload = [];
for (let i = 0; i < rest.length; i += 2) {
  const [k, v] = rest[i + 1].split('=');
  if (rest[i] === '--vec') { const [col, kind] = v.split(':'); vecs.push({ name: k, col, kind }); }
  else if (rest[i] === '--payload') payload.push({ key: k, col: v });
  else { console.error(`check_dump: unknown argument ${rest[i]}`); process.exit(2); }
}
const lines = (p) => readFileSync(p, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
const corpus = lines(corpusPath), dump = lines(dumpPath);
let failures = 0;
const fail = (m) => { failures += 1; if (failures <= 20) console.log(`FAIL: ${m}`); };

const f32eq = (a, b) => typeof a === 'number' && typeof b === 'number' && Math.fround(a) === Math.fround(b);
const vecEq = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => f32eq(x, b[i]));
const deepEq = (a, b) => {
  if (typeof a === 'number' && typeof b === 'number') return a === b || f32eq(a, b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEq(x, b[i]));
  if (a && typeof a === 'object') {
    if (!b || typeof b !== 'object' || Array.isArray(b)) return false;
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && deepEq(a[k], b[k]));
  }
  return a === b;
};
const unpack = (v) => {
  if (typeof v === 'string' && v.trimStart().startsWith('{')) {
    try { const o = JSON.parse(v); if (o && typeof o === 'object' && !Array.isArray(o)) return o; } catch { /* a plain string */ }
  }
  return v;
};
const short = (v) => JSON.stringify(v).slice(0, 160);

const got = new Map();
for (const p of dump) {
  const id = String(p.id);
  if (got.has(id)) fail(`id ${id} twice in the dump`);
  got.set(id, p);
}
const seen = new Set();
for (const r of corpus) {
  const id = String(r.__id__);
  if (seen.has(id)) { fail(`id ${id} twice in the corpus (the id expression is not unique)`); continue; }
  seen.add(id);
  const p = got.get(id);
  if (!p) { fail(`id ${id} missing from the collection`); continue; }
  const names = new Set(Object.keys(p.vector || {}));
  for (const v of vecs) {
    const want = r[v.col], have = p.vector ? p.vector[v.name] : undefined;
    names.delete(v.name);
    if (want === null || want === undefined) {
      if (have !== undefined) fail(`id ${id}: vector ${v.name} should be absent (null in the corpus), got ${short(have)}`);
      continue;
    }
    if (v.kind === 'dense') {
      if (!vecEq(want, have)) fail(`id ${id}: ${v.name} ${short(have)} != corpus ${short(want)}`);
    } else if (v.kind === 'multi') {
      if (!Array.isArray(have) || have.length !== want.length || !want.every((w, i) => vecEq(w, have[i])))
        fail(`id ${id}: ${v.name} ${short(have)} != corpus ${short(want)}`);
    } else {
      const w = typeof want === 'string' ? JSON.parse(want) : want;
      if (w.indices.length === 0 && have === undefined) continue;
      if (!have || !Array.isArray(have.indices) || have.indices.length !== w.indices.length ||
          !w.indices.every((ix, i) => ix === have.indices[i]) || !vecEq(w.values, have.values))
        fail(`id ${id}: ${v.name} ${short(have)} != corpus ${short(w)}`);
    }
  }
  if (names.size) fail(`id ${id}: unexpected vectors ${[...names].join(', ')}`);
  const wantPayload = {};
  for (const { key, col } of payload) if (r[col] !== null && r[col] !== undefined) wantPayload[key] = unpack(r[col]);
  if (!deepEq(wantPayload, p.payload || {})) fail(`id ${id}: payload ${short(p.payload)} != corpus ${short(wantPayload)}`);
}
for (const id of got.keys()) if (!seen.has(id)) fail(`id ${id} in the collection but not in the corpus`);
if (failures) { console.log(`check_dump: ${failures} difference(s) between ${dumpPath} and the corpus`); process.exit(1); }
console.log(`check_dump: ${corpus.length} points equal the corpus (ids, ${vecs.map((v) => v.name).join(', ')}, payload)`);
