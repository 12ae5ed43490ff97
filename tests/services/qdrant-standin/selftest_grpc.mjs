#!/usr/bin/env node
// The stand-in's own check of its gRPC side (grpc.mjs), with an independent client (@grpc/grpc-js
// + protobufjs over the official protos): valid calls are answered in the protos' response types
// and land in the same model the REST side serves (a collection made over gRPC is read over
// REST, a point upserted over gRPC is dumped float for float); unknown field numbers, wrong wire
// types, a Vector with no member, a wrong dimension, an unknown enum number and a missing api key
// are refused with the right gRPC status and counted; injected faults arrive as UNAVAILABLE /
// RESOURCE_EXHAUSTED (with a retry-after) / INVALID_ARGUMENT with the given message.
// usage: node selftest_grpc.mjs [--openapi FILE] [--oracle DIR] [--proto DIR]; 77 when a piece is missing.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../../..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const shared = process.env.VF_SHARED || path.resolve(REPO, '../shared');
const openapi = opt('--openapi', path.join(shared, 'qdrant/openapi.json'));
const protoDir = opt('--proto', path.join(shared, 'qdrant/proto'));
const oracle = opt('--oracle', path.join(REPO, 'tests/oracle'));
for (const p of [openapi, path.join(protoDir, 'points_service.proto'), path.join(oracle, 'node_modules/@grpc/grpc-js')])
  if (!existsSync(p)) { console.log(`selftest_grpc: skipped: no ${p}`); process.exit(77); }
const req = createRequire(path.join(oracle, 'package.json'));
const grpc = req('@grpc/grpc-js');
const pb = req('protobufjs');
const { startStandin } = await import('./server.mjs');

let passed = 0, failed = 0;
const check = (cond, what) => { if (cond) passed += 1; else { failed += 1; console.log(`FAIL: ${what}`); } };
const KEY = 'selftest-key';
const s = await startStandin({ openapi, oracle, protoDir, optimizeMs: 50, grpcPort: 0, apiKey: KEY });
const base = `http://127.0.0.1:${s.port}`;
const root = new pb.Root();
root.resolvePath = (o, t) => (t.startsWith('google/') ? t : path.join(protoDir, t));
root.loadSync(['collections_service.proto', 'points_service.proto'], { keepCase: true });
root.resolveAll();
const T = (n) => root.lookupType(n);
const client = new grpc.Client(`127.0.0.1:${s.grpcPort}`, grpc.credentials.createInsecure());
// a raw call: bytes in, {code, details, metadata, bytes} out
const rawCall = (method, bytes, key = KEY) => new Promise((resolve) => {
  const md = new grpc.Metadata();
  if (key) md.set('api-key', key);
  const c = client.makeUnaryRequest(method, (b) => b, (b) => b, bytes, md, (e, resp) => {
    resolve(e ? { code: e.code, details: e.details, metadata: e.metadata } : { code: 0, bytes: resp });
  });
  c.on('status', () => {});
});
const enc = (type, obj) => Buffer.from(T(type).encode(T(type).fromObject(obj)).finish());
const dec = (type, b) => T(type).toObject(T(type).decode(b), { longs: String, enums: String });
const rest = async (method, p, body) => {
  const r = await fetch(base + p, { method, headers: { 'api-key': KEY, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return { code: r.status, json: await r.json().catch(() => null) };
};
const stats = async () => (await (await fetch(base + '/__standin/stats')).json());
const faults = async (b) => fetch(base + '/__standin/faults', { method: 'POST', body: JSON.stringify(b) });

// 1. a collection made over gRPC is the REST side's collection
const create = {
  collection_name: 'g', vectors_config: { params_map: { map: { d: { size: 3, distance: 'Dot', datatype: 'Float16', hnsw_config: { m: 0 } } } } },
  sparse_vectors_config: { map: { s: { modifier: 'Idf' } } }, optimizers_config: { indexing_threshold: 0, max_optimization_threads: { setting: 'Auto' } },
  metadata: { k: { integer_value: 7 } },
};
let r = await rawCall('/qdrant.Collections/Create', enc('qdrant.CreateCollection', create));
check(r.code === 0 && dec('qdrant.CollectionOperationResponse', r.bytes).result === true, `Create: ${r.code} ${r.details}`);
const info = await rest('GET', '/collections/g');
const p = info.json && info.json.result.config.params;
check(info.code === 200 && p.vectors.d.size === 3 && p.vectors.d.distance === 'Dot' && p.vectors.d.datatype === 'float16' &&
  p.vectors.d.hnsw_config.m === 0 && p.sparse_vectors.s.modifier === 'idf' &&
  info.json.result.config.optimizer_config.max_optimization_threads === 'auto' && info.json.result.config.metadata.k === 7,
`the gRPC-made collection over REST: ${JSON.stringify(info.json).slice(0, 500)}`);
r = await rawCall('/qdrant.Collections/Get', enc('qdrant.GetCollectionInfoRequest', { collection_name: 'g' }));
const gi = r.code === 0 ? dec('qdrant.GetCollectionInfoResponse', r.bytes).result : null;
check(gi && gi.status === 'Green' && gi.config.params.vectors_config.params_map.map.d.datatype === 'Float16' &&
  gi.config.optimizer_config.indexing_threshold === '0' && gi.optimizer_status.ok === true, `Get over gRPC: ${JSON.stringify(gi).slice(0, 400)}`);

// 2. points: upsert over gRPC, dumped over REST as sent (float32)
const f = [0.1, -2.5, 3e-8];
const up = {
  collection_name: 'g', wait: true,
  points: [{ id: { num: 5 }, vectors: { vectors: { vectors: { d: { dense: { data: f } }, s: { sparse: { indices: [4, 9], values: [1, 2] } } } } },
    payload: { t: { string_value: 'x' }, n: { integer_value: 3 } } },
  { id: { uuid: '0123abcd-0000-1111-2222-333344445555' }, vectors: { vectors: { vectors: { d: { dense: { data: [1, 1, 1] } } } } } }],
};
r = await rawCall('/qdrant.Points/Upsert', enc('qdrant.UpsertPoints', up));
check(r.code === 0 && dec('qdrant.PointsOperationResponse', r.bytes).result.status === 'Completed', `Upsert: ${r.code} ${r.details}`);
const dump = (await (await fetch(base + '/__standin/dump?collection=g')).text()).trim().split('\n').map((l) => JSON.parse(l));
check(dump.length === 2 && dump[0].id === 5 && dump[0].vector.d.every((x, i) => x === Math.fround(f[i])) &&
  dump[0].vector.s.indices.join() === '4,9' && dump[0].payload.t === 'x' && dump[0].payload.n === 3 &&
  dump[1].id === '0123abcd-0000-1111-2222-333344445555', `the dump: ${JSON.stringify(dump).slice(0, 400)}`);
r = await rawCall('/qdrant.Points/Count', enc('qdrant.CountPoints', { collection_name: 'g', exact: true }));
check(r.code === 0 && dec('qdrant.CountResponse', r.bytes).result.count === '2', `Count: ${r.code}`);
r = await rawCall('/qdrant.Points/QueryBatch', enc('qdrant.QueryBatchPoints', {
  collection_name: 'g', query_points: [{ collection_name: 'g', query: { nearest: { dense: { data: [1, 0, 0] } } }, using: 'd', limit: 2, with_payload: { enable: false } }],
}));
const hits = r.code === 0 ? dec('qdrant.QueryBatchResponse', r.bytes).result[0].result : [];
check(hits.length === 2 && hits[0].id.uuid === '0123abcd-0000-1111-2222-333344445555' && Math.abs(hits[0].score - 1) < 1e-6 &&
  hits[1].id.num === '5', `QueryBatch: ${r.code} ${r.details} ${JSON.stringify(hits)}`);

// 3. refused: unknown field, wrong wire type, no Vector member, dimension, enum, api key
const before = (await stats()).invalid;
const get = enc('qdrant.GetCollectionInfoRequest', { collection_name: 'g' });
r = await rawCall('/qdrant.Collections/Get', Buffer.concat([get, Buffer.from([0x98, 0x06, 0x01])])); // field 99 varint
check(r.code === grpc.status.INVALID_ARGUMENT && /unknown field number 99 in qdrant.GetCollectionInfoRequest/.test(r.details), `unknown field: ${r.code} ${r.details}`);
r = await rawCall('/qdrant.Collections/Get', Buffer.from([0x08, 0x01])); // collection_name as a varint
check(r.code === grpc.status.INVALID_ARGUMENT && /wire type 0, expected 2/.test(r.details), `wrong wire type: ${r.code} ${r.details}`);
r = await rawCall('/qdrant.Points/Upsert', enc('qdrant.UpsertPoints', { collection_name: 'g', points: [{ id: { num: 1 }, vectors: { vectors: { vectors: { d: {} } } } }] }));
check(r.code === grpc.status.INVALID_ARGUMENT && /Vector with no member/.test(r.details), `empty Vector: ${r.code} ${r.details}`);
r = await rawCall('/qdrant.Points/Upsert', enc('qdrant.UpsertPoints', { collection_name: 'g', points: [{ id: { num: 1 }, vectors: { vectors: { vectors: { d: { dense: { data: [1, 2] } } } } } }] }));
check(r.code === grpc.status.INVALID_ARGUMENT && /dimension/.test(r.details), `wrong dimension: ${r.code} ${r.details}`);
const badEnum = Buffer.concat([enc('qdrant.CreateCollection', { collection_name: 'h' }),
  enc('qdrant.CreateCollection', { vectors_config: { params: { size: 2 } } }), Buffer.from([0x52, 0x04, 0x0a, 0x02, 0x10, 0x63])]); // vectors_config.params.distance = 99
r = await rawCall('/qdrant.Collections/Create', badEnum);
check(r.code === grpc.status.INVALID_ARGUMENT && /equivalent JSON body/.test(r.details), `unknown Distance 99: ${r.code} ${r.details}`);
r = await rawCall('/qdrant.Collections/Get', get, null);
check(r.code === grpc.status.UNAUTHENTICATED, `no api key: ${r.code}`);
r = await rawCall('/qdrant.Collections/Get', get, 'wrong');
check(r.code === grpc.status.PERMISSION_DENIED, `wrong api key: ${r.code}`);
r = await rawCall('/qdrant.Collections/Get', enc('qdrant.GetCollectionInfoRequest', { collection_name: 'nope' }));
check(r.code === grpc.status.NOT_FOUND, `missing collection: ${r.code}`);
r = await rawCall('/qdrant.Collections/Create', enc('qdrant.CreateCollection', create));
check(r.code === grpc.status.ALREADY_EXISTS, `create twice: ${r.code}`);
const after = await stats();
check(after.invalid - before === 4 && after.rejected === 2 && after.auth_failures === 2,
  `stats count the refusals: invalid +${after.invalid - before} (4), rejected ${after.rejected} (2: dimension, create twice), auth ${after.auth_failures}`);

// filters: a valid proto Filter becomes a valid REST filter (then the model may not have it:
// UNIMPLEMENTED until it does); a Condition with no member is refused
r = await rawCall('/qdrant.Points/Count', enc('qdrant.CountPoints', { collection_name: 'g', exact: true, filter: {
  must: [{ field: { key: 'n', match: { integer: 3 } } }, { field: { key: 'd', datetime_range: { gte: { seconds: 1714557600 } } } },
    { has_id: { has_id: [{ num: 5 }] } }, { nested: { key: 'o', filter: { should: [{ is_empty: { key: 'x' } }] } } }],
  must_not: [{ field: { key: 't', match: { keywords: { strings: ['a', 'b'] } } } }] } }));
check(r.code === 0 || r.code === grpc.status.UNIMPLEMENTED, `Count with a filter: ${r.code} ${r.details}`);
const inv = (await stats()).invalid;
r = await rawCall('/qdrant.Points/Count', enc('qdrant.CountPoints', { collection_name: 'g', filter: { must: [{}] } }));
check(r.code === grpc.status.INVALID_ARGUMENT && /Condition with no member/.test(r.details) && (await stats()).invalid === inv + 1,
  `a Condition with no member: ${r.code} ${r.details}`);

// 4. faults
await faults({ reset: true, fail_next: 2, grpc_status: [14, 8], retry_after: 2 });
r = await rawCall('/qdrant.Collections/Get', get);
check(r.code === grpc.status.UNAVAILABLE, `fault UNAVAILABLE: ${r.code}`);
r = await rawCall('/qdrant.Collections/Get', get);
check(r.code === grpc.status.RESOURCE_EXHAUSTED && r.metadata.get('retry-after')[0] === '2', `fault RESOURCE_EXHAUSTED + retry-after: ${r.code}`);
await faults({ reset: true, fail_next: 1, status: 503, only: 'upsert_points', apply: true });
r = await rawCall('/qdrant.Points/Upsert', enc('qdrant.UpsertPoints', { ...up, points: [{ ...up.points[0], id: { num: 77 } }] }));
check(r.code === grpc.status.UNAVAILABLE && (await rest('POST', '/collections/g/points/count', { exact: true })).json.result.count === 3,
  `apply: the write happens, the answer is UNAVAILABLE (${r.code})`);
await faults({ reset: true, fail_next: 1, grpc_status: [3], message: 'Wrong input: points[0]: test' });
r = await rawCall('/qdrant.Collections/Get', get);
check(r.code === grpc.status.INVALID_ARGUMENT && r.details === 'Wrong input: points[0]: test', `fault message: ${r.details}`);
await faults({ reset: true });

client.close();
await s.close();
console.log(`selftest_grpc: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
