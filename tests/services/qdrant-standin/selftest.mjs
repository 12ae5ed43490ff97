#!/usr/bin/env node
// The Qdrant stand-in's own check: valid requests are accepted and their responses validate
// against the 200-response schemas of ../shared/qdrant/openapi.json; invalid bodies, query
// parameters and routes are refused (400/404) and counted in /__standin/stats; the point model
// (ids, dense / sparse / multivector, float32, dimension checks, replace by id, exact count,
// scroll, query and query/batch), the status model (green / yellow / grey / red), fault
// injection (429 + Retry-After, 503, apply, delays), the api-key check and the admin routes.
// usage: node selftest.mjs [--openapi FILE] [--oracle DIR]; exits 77 when ajv or the schema is missing.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const REPO = path.resolve(HERE, '../../..');
const openapi = opt('--openapi', process.env.VF_SHARED ? path.join(process.env.VF_SHARED, 'qdrant/openapi.json') : path.resolve(REPO, '../shared/qdrant/openapi.json'));
const oracle = opt('--oracle', path.join(REPO, 'tests/oracle'));
if (!existsSync(openapi)) { console.log(`selftest: skipped: no ${openapi}`); process.exit(77); }
if (!existsSync(path.join(oracle, 'node_modules/ajv'))) { console.log(`selftest: skipped: no ajv in ${oracle}/node_modules (npm ci there)`); process.exit(77); }
const { startStandin, parseJson, stringify } = await import('./server.mjs');

let passed = 0, failed = 0;
const check = (cond, what) => {
  if (cond) { passed += 1; } else { failed += 1; console.log(`FAIL: ${what}`); }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const s = await startStandin({ openapi, oracle, optimizeMs: 150 });
const base = `http://127.0.0.1:${s.port}`;
let sentInvalid = 0;

async function call(method, p, body, { headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = raw ? body : stringify(body);
    if (!('content-type' in init.headers)) init.headers['content-type'] = 'application/json';
  }
  const r = await fetch(base + p, init);
  const text = await r.text();
  let json = null;
  try { json = parseJson(text).value; } catch { /* not JSON */ }
  return { code: r.status, json, text, headers: r.headers };
}
// a valid call: 200 and the response validates against the operation's 200 schema
async function good(op, method, p, body, what) {
  const r = await call(method, p, body);
  check(r.code === 200, `${what}: HTTP ${r.code} ${r.text.slice(0, 300)}`);
  const v = s.spec.responseValidator(op);
  if (v && r.code === 200) check(v(parseJson(r.text).plain), `${what}: response does not match the ${op} 200 schema: ${s.spec.errorsText(v.errors)}`);
  return r.json && r.json.result;
}
async function bad(method, p, body, code, what, opts) {
  const r = await call(method, p, body, opts);
  check(r.code === code, `${what}: expected HTTP ${code}, got ${r.code} ${r.text.slice(0, 200)}`);
  check(r.json && r.json.status && typeof r.json.status.error === 'string', `${what}: Qdrant-style error body expected: ${r.text.slice(0, 200)}`);
  return r;
}
const stats = async () => (await call('GET', '/__standin/stats')).json;
const info = async (name) => (await call('GET', `/collections/${name}`)).json.result;

// ---- 1. parseJson keeps 64-bit ids
{
  const { value, plain } = parseJson('{"id":18446744073709551615,"f":[0.12345678901234567,1e-7],"s":"12345678901234567890"}');
  check(value.id === 18446744073709551615n && typeof plain.id === 'number', 'parseJson: uint64 id as BigInt');
  check(value.s === '12345678901234567890' && value.f[1] === 1e-7, 'parseJson: strings and floats untouched');
  check(stringify({ id: 18446744073709551615n }) === '{"id":18446744073709551615}', 'stringify BigInt');
}

// ---- 2. collections: create, info, exists, list
const create = {
  vectors: {
    dense: { size: 4, distance: 'Cosine' },
    colbert: { size: 2, distance: 'Dot', multivector_config: { comparator: 'max_sim' } },
    euc: { size: 2, distance: 'Euclid' },
  },
  sparse_vectors: { sparse: {} },
  hnsw_config: { m: 32, ef_construct: 200 },
  optimizers_config: { indexing_threshold: 0 },
  quantization_config: { scalar: { type: 'int8', quantile: 0.99, always_ram: true } },
  shard_number: 2, replication_factor: 1, write_consistency_factor: 1, on_disk_payload: true,
  metadata: { owner: 'selftest' },
};
check((await good('create_collection', 'PUT', '/collections/c1', create, 'create c1')) === true, 'create returns true');
await bad('PUT', '/collections/c1', create, 409, 'create an existing collection');
let ci = await good('get_collection', 'GET', '/collections/c1', undefined, 'info c1');
check(ci.status === 'green' && ci.optimizer_status === 'ok' && ci.points_count === 0, `new collection green/ok/0: ${stringify(ci).slice(0, 200)}`);
check(ci.config.optimizer_config.indexing_threshold === 0 && ci.config.hnsw_config.m === 32 && ci.config.params.shard_number === 2, 'config echoed');
check(ci.config.params.vectors.colbert.multivector_config.comparator === 'max_sim' && 'sparse' in ci.config.params.sparse_vectors, 'vectors echoed');
check((await good('collection_exists', 'GET', '/collections/c1/exists', undefined, 'exists')).exists === true, 'exists true');
check((await good('collection_exists', 'GET', '/collections/nope/exists', undefined, 'exists')).exists === false, 'exists false');
check((await good('get_collections', 'GET', '/collections', undefined, 'list')).collections.some((c) => c.name === 'c1'), 'list has c1');
await bad('GET', '/collections/nope', undefined, 404, 'info of a missing collection');

// ---- 3. invalid requests are refused and counted
const invalid = [
  ['PUT', '/collections/x', { vectors: { d: { size: 4, distance: 'cosine' } } }, 'distance is case sensitive'],
  ['PUT', '/collections/x', { vectors: { d: { size: '4', distance: 'Cosine' } } }, 'size as a string'],
  ['PUT', '/collections/x', { vectors: { d: { size: 0, distance: 'Cosine' } } }, 'size 0'],
  ['PUT', '/collections/x', { vectors: { d: { size: 4, distance: 'Cosine' } }, optimizer_config: { indexing_threshold: 0 } }, 'misspelt key optimizer_config'],
  ['PUT', '/collections/x', { vectors: { d: { size: 4, distance: 'Cosine' } }, shard_number: 0 }, 'shard_number 0'],
  ['PUT', '/collections/x', { vectors: { d: { size: 4, distance: 'Cosine' } }, quantization_config: { scalar: { type: 'int4' } } }, 'unknown scalar type'],
  ['PATCH', '/collections/c1', { optimizers_config: { indexing_threshold: -1 } }, 'negative indexing_threshold'],
  ['PUT', '/collections/c1/points', { points: [{ id: -1, vector: { dense: [1, 2, 3, 4] } }] }, 'negative id'],
  ['PUT', '/collections/c1/points', { points: [{ id: 'not-a-uuid', vector: { dense: [1, 2, 3, 4] } }] }, 'string id that is no UUID'],
  ['PUT', '/collections/c1/points', { points: [{ id: 1.5, vector: { dense: [1, 2, 3, 4] } }] }, 'fractional id'],
  ['PUT', '/collections/c1/points', { points: [{ id: 1, vector: { dense: [1, '2', 3, 4] } }] }, 'string in a vector'],
  ['PUT', '/collections/c1/points', { points: [{ id: 1, vector: { sparse: { indices: [-1], values: [1] } } }] }, 'negative sparse index'],
  ['PUT', '/collections/c1/points', { points: [{ id: 1, vectors: { dense: [1, 2, 3, 4] } }] }, '"vectors" instead of "vector"'],
  ['PUT', '/collections/c1/points', { points: [{ id: 1, vector: { dense: [1, 2, 3, 4] }, payload: [1] }] }, 'payload as an array'],
  ['POST', '/collections/c1/points/count', { exact: 'yes' }, 'exact as a string'],
  ['POST', '/collections/c1/points/query/batch', { searches: [{ query: [1, 2, 3, 4], limit: 0 }] }, 'limit 0'],
  ['POST', '/collections/c1/points/query', { query: [1, 2, 3, 4], params: { hnsw_ef: 'x' } }, 'hnsw_ef as a string'],
];
for (const [m, p, b, what] of invalid) { await bad(m, p, b, 400, `invalid: ${what}`); sentInvalid += 1; }
await bad('PUT', '/collections/c1/points?wait=maybe', { points: [] }, 400, 'invalid: wait=maybe'); sentInvalid += 1;
await bad('PUT', '/collections/c1/points?wiat=true', { points: [] }, 400, 'invalid: unknown query parameter'); sentInvalid += 1;
await bad('PUT', '/collections/c1/points', '{"points": [', 400, 'invalid: truncated JSON', { raw: true }); sentInvalid += 1;
await bad('PUT', '/collections/c1/points', '{"points": []}', 400, 'invalid: no content-type', { raw: true, headers: { 'content-type': 'text/plain' } }); sentInvalid += 1;
await bad('PUT', '/collections/c1', undefined, 400, 'invalid: create without a body'); sentInvalid += 1;
await bad('POST', '/collections/c1/pointz', {}, 404, 'invalid: no such route'); sentInvalid += 1;
await bad('PATCH', '/collections/c1/points/count', {}, 405, 'invalid: wrong method'); sentInvalid += 1;
let st = await stats();
check(st.invalid === sentInvalid, `stats.invalid ${st.invalid} == ${sentInvalid} invalid requests sent`);
check(st.invalid_samples.some((x) => /optimizer_config/.test(x.error)), 'the misspelt key is named in the error');
check(!st.collections && (await call('GET', '/collections/x')).code === 404, 'no invalid create went through');

// ---- 4. points
const U = '550E8400-E29B-41D4-A716-446655440000';
const pts = [
  { id: 1, vector: { dense: [1, 0, 0, 0], colbert: [[1, 0], [0, 1]], sparse: { indices: [3, 7], values: [0.5, 0.25] }, euc: [0, 0] }, payload: { a: 1, t: 'one' } },
  { id: U, vector: { dense: [0.1, 0.2, 0.3, 0.4] }, payload: { a: 2, nested: { x: [1, 2] } } },
  { id: 18446744073709551615n, vector: { dense: [0, 1, 0, 0], sparse: { indices: [7], values: [2] }, euc: [3, 4] } },
  { id: 5, vector: {} },
];
let up = await good('upsert_points', 'PUT', '/collections/c1/points?wait=true', { points: pts }, 'upsert 4 points');
check(up.status === 'completed' && up.operation_id >= 1, 'wait=true → completed');
up = await good('upsert_points', 'PUT', '/collections/c1/points?wait=false', { points: [{ id: 1, vector: { dense: [1, 0, 0, 0], euc: [0, 0] }, payload: { a: 10 } }] }, 'replace id 1');
check(up.status === 'acknowledged', 'wait=false → acknowledged');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { dense: [1, 2, 3] } }] }, 400, 'dense dimension 3 != 4');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { colbert: [[1, 2, 3]] } }] }, 400, 'multivector dimension');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { colbert: [1, 2] } }] }, 400, 'plain vector for a multivector');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { nope: [1, 2, 3, 4] } }] }, 400, 'unknown vector name');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { sparse: { indices: [1, 1], values: [1, 2] } } }] }, 422, 'duplicate sparse indices');
await bad('PUT', '/collections/c1/points', { points: [{ id: 9, vector: { sparse: { indices: [1], values: [1, 2] } } }] }, 422, 'sparse lengths differ');
await bad('PUT', '/collections/nope/points', { points: [] }, 404, 'upsert into a missing collection');
const cnt = await good('count_points', 'POST', '/collections/c1/points/count', { exact: true }, 'count');
check(cnt.count === 4, `exact count 4, got ${cnt.count}`);
// dump: as received, float32, sorted (integers first, then UUIDs)
const dump = (await call('GET', '/__standin/dump?collection=c1')).text.trim().split('\n').map((l) => parseJson(l).value);
check(dump.length === 4, 'dump has 4 points');
check(dump[0].id === 1 && dump[0].payload.a === 10 && !('colbert' in dump[0].vector), 'upsert replaced id 1 whole (vectors and payload)');
check(dump[1].id === 5 && Object.keys(dump[1].vector).length === 0, 'point without vectors');
check(dump[2].id === 18446744073709551615n && dump[2].vector.sparse.values[0] === 2, 'uint64 max id round-trips');
check(dump[3].id === U.toLowerCase() && dump[3].vector.dense[0] === Math.fround(0.1), 'UUID normalised to lowercase, floats stored as float32');
// scroll all pages
let all = [], offset = null, pages = 0;
do {
  const r = await good('scroll_points', 'POST', '/collections/c1/points/scroll', { limit: 3, with_vector: true, with_payload: true, ...(offset !== null ? { offset } : {}) }, 'scroll');
  all = all.concat(r.points); offset = r.next_page_offset; pages += 1;
} while (offset !== null && pages < 10);
check(pages === 2 && all.length === 4, `scroll: 2 pages of 4 points (${pages}, ${all.length})`);
const u = all.find((p) => p.id === U.toLowerCase());
const n = Math.hypot(0.1, 0.2, 0.3, 0.4);
check(u && Math.abs(u.vector.dense[3] - 0.4 / n) < 1e-6, 'Cosine vectors come back normalised through the API');
const got = await good('get_points', 'POST', '/collections/c1/points', { ids: [5, U, 77], with_payload: true }, 'get points');
check(got.length === 2, 'get points by id');
// query
let q = await good('query_points', 'POST', '/collections/c1/points/query', { query: [0.9, 0.1, 0, 0], using: 'dense', limit: 2, with_payload: true }, 'query dense');
check(q.points.length === 2 && q.points[0].id === 1 && q.points[0].score > 0.99 && q.points[0].payload.a === 10, `dense query: ${stringify(q).slice(0, 200)}`);
q = await good('query_points', 'POST', '/collections/c1/points/query', { query: { nearest: [3, 4] }, using: 'euc', limit: 5 }, 'query euclid');
check(q.points[0].id === 18446744073709551615n && q.points[0].score === 0 && q.points[1].score === 5, 'Euclid: distances ascending');
q = await good('query_points', 'POST', '/collections/c1/points/query', { query: { indices: [7], values: [1] }, using: 'sparse' }, 'query sparse');
check(q.points.length === 1 && q.points[0].id === 18446744073709551615n && q.points[0].score === 2, 'sparse dot product (only points having the sparse vector)');
const qb = await good('query_batch_points', 'POST', '/collections/c1/points/query/batch', { searches: [
  { query: [0, 1, 0, 0], using: 'dense', limit: 1, params: { hnsw_ef: 64, exact: false, quantization: { rescore: true, oversampling: 2 } } },
  { query: [[1, 0]], using: 'colbert', limit: 3, with_payload: false },
] }, 'query batch');
check(qb.length === 2 && qb[0].points[0].id === 18446744073709551615n, 'batch query 1');
check((await stats()).search_params.some((p) => p.hnsw_ef === 64), 'search params recorded');
await bad('POST', '/collections/c1/points/query', { query: [1, 2], using: 'dense' }, 400, 'query dimension');

// ---- 4b. payload filters (filter.mjs), with the examples of Qdrant's filtering documentation
{
  await good('create_collection', 'PUT', '/collections/cf', { vectors: { v: { size: 2, distance: 'Dot' } } }, 'create cf');
  const cities = [['London', 'green'], ['London', 'red'], ['London', 'blue'], ['Berlin', 'red'], ['Moscow', 'green'], ['Moscow', 'blue']];
  const pts = cities.map(([city, color], i) => ({ id: i + 1, vector: { v: [1, i] }, payload: { city, color } }));
  pts.push({ id: 7, vector: { v: [1, 0] }, payload: { diet: [{ food: 'leaves', likes: false }, { food: 'meat', likes: true }], n: 3, tags: ['a', 'b'], d: '2020-02-15T00:00:00Z', nil: null, empty: [] } });
  pts.push({ id: 8, vector: { v: [1, 0] }, payload: { diet: [{ food: 'leaves', likes: true }, { food: 'meat', likes: false }], n: 3.5, tags: [], nil: [null], loc: { lon: 13.404954, lat: 52.520008 } } });
  await good('upsert_points', 'PUT', '/collections/cf/points?wait=true', { points: pts }, 'upsert cf');
  const ids = async (filter, what) => {
    const r = await good('query_points', 'POST', '/collections/cf/points/query', { query: [1, 0], using: 'v', limit: 100, filter }, what);
    return r.points.map((p) => Number(p.id)).sort((a, b) => a - b).join(',');
  };
  const m = (key, value) => ({ key, match: { value } });
  const cases = [
    [{ must: [m('city', 'London'), m('color', 'red')] }, '2', 'must'],
    [{ should: [m('city', 'London'), m('color', 'red')] }, '1,2,3,4', 'should'],
    [{ must_not: [m('city', 'London'), m('color', 'red')] }, '5,6,7,8', 'must_not'],
    [{ must: [m('city', 'London')], must_not: [m('color', 'red')] }, '1,3', 'must + must_not'],
    [{ must_not: [{ must: [m('city', 'London'), m('color', 'red')] }] }, '1,3,4,5,6,7,8', 'nested clauses'],
    [{ must: [{ has_id: [1, 3, 5, 7, 9, 11] }] }, '1,3,5,7', 'has_id'],
    [{ should: [] }, '', 'an empty should matches nothing'],
    [{ must: [{ key: 'color', match: { any: ['black', 'red'] } }] }, '2,4', 'match any'],
    [{ must: [{ key: 'city', match: { except: ['London', 'Berlin'] } }] }, '5,6', 'match except'],
    [{ must: [m('diet[].food', 'meat'), m('diet[].likes', true)] }, '7,8', 'array projection'],
    [{ must: [{ nested: { key: 'diet', filter: { must: [m('food', 'meat'), m('likes', true)] } } }] }, '7', 'nested object filter'],
    [{ must: [{ key: 'n', range: { gt: 3 } }] }, '8', 'range'],
    [{ must: [m('n', 3)] }, '7', 'match integer'],
    [{ must: [m('tags', 'b')] }, '7', 'an array value matches by an element'],
    [{ must: [{ key: 'tags', values_count: { gte: 2 } }] }, '7', 'values_count'],
    [{ must: [{ is_empty: { key: 'tags' } }] }, '1,2,3,4,5,6,8', 'is_empty: missing or []'],
    [{ must: [{ is_null: { key: 'nil' } }] }, '7', 'is_null: null, not [null]'],
    [{ must: [{ key: 'd', range: { gte: '2020-02-01T00:00:00Z', lt: '2020-03-01T00:00:00+01:00' } }] }, '7', 'datetime range'],
    [{ must: [{ key: 'loc', geo_radius: { center: { lon: 13.4, lat: 52.52 }, radius: 1000 } }] }, '8', 'geo radius'],
    [{ min_should: { conditions: [m('city', 'London'), m('color', 'red'), { has_id: [2, 4] }], min_count: 2 } }, '2,4', 'min_should'],
  ];
  for (const [f, want, what] of cases) {
    const gotIds = await ids(f, `filter: ${what}`);
    check(gotIds === want, `filter ${what}: ${gotIds} (want ${want})`);
  }
  const cnt = await good('count_points', 'POST', '/collections/cf/points/count', { filter: { must: [m('city', 'London')] }, exact: true }, 'count with a filter');
  check(cnt.count === 3, `count with a filter: ${cnt.count}`);
  const sc = await good('scroll_points', 'POST', '/collections/cf/points/scroll', { filter: { must: [m('color', 'blue')] }, limit: 10 }, 'scroll with a filter');
  check(sc.points.map((p) => p.id).join(',') === '3,6', 'scroll with a filter');
  await bad('POST', '/collections/cf/points/query', { query: [1, 0], using: 'v', filter: { must: [{ has_vector: 'v' }] } }, 501, 'has_vector is not modelled');
  await bad('POST', '/collections/cf/points/query', { query: [1, 0], using: 'v', filter: { must: [{ key: 'a', mach: { value: 1 } }] } }, 400, 'a misspelt condition is refused'); sentInvalid += 1;
  await good('delete_collection', 'DELETE', '/collections/cf', undefined, 'delete cf');
}

// ---- 5. the status model
// a) threshold 0 (c1): upserts leave it green; PATCH to > 0 → yellow, then green
ci = await info('c1');
check(ci.status === 'green', `indexing off: still green after upserts (${ci.status})`);
await good('update_collection', 'PATCH', '/collections/c1', { optimizers_config: { indexing_threshold: 20000 }, metadata: { vf: 5 } }, 'patch threshold');
ci = await info('c1');
check(ci.status === 'yellow' && ci.config.optimizer_config.indexing_threshold === 20000, `PATCH re-enables indexing: yellow (${ci.status})`);
check(ci.config.metadata.owner === 'selftest' && ci.config.metadata.vf === 5, 'metadata merged');
await good('update_collection', 'PATCH', '/collections/c1', { metadata: { owner: null } }, 'patch metadata');
await sleep(250);
ci = await info('c1');
check(ci.status === 'green' && ci.indexed_vectors_count > 0 && !('owner' in ci.config.metadata), `then green (${ci.status})`);
// b) threshold > 0: an upsert makes it yellow for a moment
await good('create_collection', 'PUT', '/collections/c2', { vectors: { v: { size: 2, distance: 'Dot' } } }, 'create c2');
check((await info('c2')).config.optimizer_config.indexing_threshold === 10000, 'default indexing_threshold 10000');
await good('upsert_points', 'PUT', '/collections/c2/points', { points: [{ id: 1, vector: { v: [1, 2] } }] }, 'upsert c2');
check((await info('c2')).status === 'yellow', 'upsert with threshold > 0: yellow');
await sleep(250);
check((await info('c2')).status === 'green', 'then green');
// c) grey: the PATCH that restores indexing leaves it grey until the next PATCH
await call('POST', '/__standin/faults', { grey: true });
await good('update_collection', 'PATCH', '/collections/c2', { optimizers_config: { indexing_threshold: 0 } }, 'defer');
await good('upsert_points', 'PUT', '/collections/c2/points', { points: [{ id: 2, vector: { v: [1, 2] } }] }, 'upsert c2 deferred');
check((await info('c2')).status === 'green', 'deferred: green');
await good('update_collection', 'PATCH', '/collections/c2', { optimizers_config: { indexing_threshold: 10000 } }, 'restore');
check((await info('c2')).status === 'grey', 'grey after the restore');
await sleep(250);
check((await info('c2')).status === 'grey', 'still grey without a trigger');
await good('update_collection', 'PATCH', '/collections/c2', { optimizers_config: {} }, 'trigger');
check((await info('c2')).status === 'yellow', 'the trigger PATCH starts the optimisation: yellow');
await sleep(250);
check((await info('c2')).status === 'green', 'then green');
// d) optimizer error: the next optimisation fails, status red with the message
await call('POST', '/__standin/faults', { optimizer_error: 'Service internal error: No space left on device' });
await good('upsert_points', 'PUT', '/collections/c2/points', { points: [{ id: 3, vector: { v: [1, 2] } }] }, 'upsert with error');
ci = await good('get_collection', 'GET', '/collections/c2', undefined, 'info red');
check(ci.status === 'red' && ci.optimizer_status.error === 'Service internal error: No space left on device', `red with the error: ${stringify(ci.optimizer_status)}`);
await call('POST', '/__standin/faults', { reset: true });

// ---- 6. faults
let f = await call('POST', '/__standin/faults', { fail_next: 2, status: 429, retry_after: 1 });
check(f.code === 200 && f.json.fail_next === 2, 'set faults');
let r = await call('POST', '/collections/c1/points/count', { exact: true });
check(r.code === 429 && r.headers.get('retry-after') === '1' && /Too many requests/.test(r.json.status.error), `429 + Retry-After: ${r.code}`);
r = await call('POST', '/collections/c1/points/count', { exact: true });
check(r.code === 429, 'second 429');
r = await call('POST', '/collections/c1/points/count', { exact: true });
check(r.code === 200, 'then 200');
await call('POST', '/__standin/faults', { fail_next: 1, status: 503, only: 'upsert_points' });
check((await call('GET', '/collections/c1')).code === 200, '"only" spares other routes');
const beforeRetries = (await stats()).retries_seen;
const body6 = { points: [{ id: 42, vector: { dense: [1, 1, 1, 1] } }] };
r = await call('PUT', '/collections/c1/points', body6);
check(r.code === 503 && (await good('count_points', 'POST', '/collections/c1/points/count', { exact: true }, 'count')).count === 4, '503: the failed upsert was not applied');
await good('upsert_points', 'PUT', '/collections/c1/points', body6, 'retry');
check((await stats()).retries_seen === beforeRetries + 1, 'the identical upsert body is counted as a retry');
await call('POST', '/__standin/faults', { fail_next: 3, status: [502, 504], only: ['get_collection'] });
const codes = [];
for (let i = 0; i < 4; i++) codes.push((await call('GET', '/collections/c1')).code);
check(codes.join() === '502,504,502,200', `status list cycled: ${codes.join()}`);
await call('POST', '/__standin/faults', { reset: true, fail_next: 1, status: 500, apply: true });
r = await call('PUT', '/collections/c1/points', { points: [{ id: 43, vector: { dense: [1, 1, 1, 1] } }] });
check(r.code === 500 && (await call('POST', '/collections/c1/points/count', { exact: true })).json.result.count === 6, 'apply: written although the client saw 500');
await call('POST', '/__standin/faults', { reset: true, delay_ms: 200, delay_next: 1 });
let t = Date.now();
await call('GET', '/collections/c1');
check(Date.now() - t >= 190, 'delay_ms');
t = Date.now();
await call('GET', '/collections/c1');
check(Date.now() - t < 150, 'delay_next limits the delays');
check((await call('POST', '/__standin/faults', { bogus: 1 })).code === 400, 'unknown fault switch refused');
await call('POST', '/__standin/faults', { reset: true });

// ---- 7. delete, batch form, unnamed vector
check((await good('delete_collection', 'DELETE', '/collections/c2', undefined, 'delete')) === true, 'delete → true');
check((await good('delete_collection', 'DELETE', '/collections/c2', undefined, 'delete again')) === false, 'delete missing → false');
await good('create_collection', 'PUT', '/collections/c3', { vectors: { size: 3, distance: 'Euclid' } }, 'create unnamed');
await good('upsert_points', 'PUT', '/collections/c3/points', { batch: { ids: [1, 2], vectors: [[1, 2, 3], [4, 5, 6]], payloads: [{ k: 1 }, null] } }, 'batch upsert');
const s3 = await good('scroll_points', 'POST', '/collections/c3/points/scroll', { with_vector: true }, 'scroll unnamed');
check(s3.points.length === 2 && Array.isArray(s3.points[1].vector) && s3.points[1].vector[2] === 6, 'unnamed vectors');

// ---- 8. api-key
const s2 = await startStandin({ openapi, oracle, apiKey: 'sekret' });
const b2 = `http://127.0.0.1:${s2.port}`;
check((await fetch(`${b2}/collections`)).status === 401, 'no api-key → 401');
check((await fetch(`${b2}/collections`, { headers: { 'api-key': 'wrong' } })).status === 403, 'wrong api-key → 403');
check((await fetch(`${b2}/collections`, { headers: { 'api-key': 'sekret' } })).status === 200, 'right api-key → 200');
await s2.close();

// ---- 9. --lax leaves objects open (a misspelt key passes, as a real Qdrant may let it)
const s5 = await startStandin({ openapi, oracle, lax: true });
const lax = await fetch(`http://127.0.0.1:${s5.port}/collections/x`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vectors: { d: { size: 4, distance: 'Cosine' } }, optimizer_config: {} }) });
check(lax.status === 200, `--lax: unknown key accepted (${lax.status})`);
await s5.close();

// ---- 9b. body limit and final stats
const s4 = await startStandin({ openapi, oracle, maxBodyMb: 0.001 });
const big = await fetch(`http://127.0.0.1:${s4.port}/collections/c/points`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: stringify({ points: [{ id: 1, vector: new Array(500).fill(0.5) }] }) });
check(big.status === 413, `body over the limit → 413 (${big.status})`);
await s4.close();
st = await stats();
check(st.invalid === sentInvalid, `no further invalid requests (${st.invalid})`);
check(st.by_route.upsert_points > 0 && st.by_status['200'] > 0 && st.by_status['429'] === 2, 'by_route / by_status');
check(st.not_found >= 2 && st.rejected > 0, `404s counted as not_found (${st.not_found}), refusals as rejected (${st.rejected})`);
check(s.server.address().address === '127.0.0.1', 'binds 127.0.0.1 only');
await s.close();

// ---- 10. the command line: --port 0 --port-file, SIGTERM stops it
{
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'standin-'));
  const pf = path.join(dir, 'port');
  const child = spawn(process.execPath, [path.join(HERE, 'server.mjs'), '--port', '0', '--port-file', pf, '--openapi', openapi, '--oracle', oracle], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  let port = null;
  for (let i = 0; i < 100 && port === null; i++) {
    await sleep(50);
    try { port = Number(readFileSync(pf, 'utf8').trim()) || null; } catch { /* not yet */ }
  }
  check(port !== null, 'port file written');
  if (port !== null) check((await fetch(`http://127.0.0.1:${port}/collections`)).status === 200, 'the started server answers');
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  child.kill('SIGTERM');
  const e = await exited;
  check(e.code === 0 && out.includes(`127.0.0.1:${port}`), `SIGTERM: exit 0 (${e.code} ${e.sig}), port printed`);
  rmSync(dir, { recursive: true, force: true });
}

console.log(`qdrant stand-in selftest: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
