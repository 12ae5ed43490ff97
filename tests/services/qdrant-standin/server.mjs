#!/usr/bin/env node
// Qdrant stand-in for vforge's tests.
//
// Why: no Qdrant server can be installed on the build and CI machines (DESIGN.md, "Real components"),
// so vforge's Qdrant client (src/store/qdrant.c, src/io/http.c) is tested against this small HTTP
// server instead. It is NOT Qdrant: it checks that every request the client sends is valid
// against Qdrant's published OpenAPI 3.0 document (../shared/qdrant/openapi.json: route, path and
// query parameters, request body), and models just enough behaviour for a loader:
//   - collections: create (named / unnamed dense vectors with distance, multivectors, sparse vectors,
//     hnsw / optimizers / quantization / sharding params), info, exists, list, update (PATCH), delete;
//   - points: upsert (list and batch forms; ids as unsigned integers, up to 2^64-1, or UUIDs;
//     replacing an existing id), retrieve by id, delete by id list, exact count, scroll, and the
//     Query API (single and batch) as brute force over the stored vectors;
//   - collection status: green / yellow (optimising for a moment after an upsert while
//     indexing_threshold > 0, or after a PATCH that re-enables indexing over unindexed points) /
//     grey (an optimisation is pending and needs a trigger: any later PATCH) / red (an injected
//     optimizer error, reported in optimizer_status as Qdrant does);
//   - fault injection (POST /__standin/faults, keys: fail_next N, status CODE or [CODES] cycled,
//     retry_after S, only OPERATION_ID or [..], apply, delay_ms, delay_next, optimizer_error,
//     grey, optimize_ms; {"reset": true} first): N failures with 429 / 5xx (+ Retry-After), delays
//     (a client timeout), an optimizer error, grey status, optional "apply" (the write happens but
//     the client sees an error, as after a lost response).
// Vectors are kept as float32 (as Qdrant stores them); Cosine vectors are normalised when returned
// through the Qdrant API (as Qdrant does), while GET /__standin/dump returns them as received
// (float32-rounded) so tests can compare them with the corpus.
//
// Schema handling (OpenAPI 3.0.1 to JSON Schema for ajv): `nullable` without `type` becomes a null
// alternative, Qdrant's numeric formats (uint, uint8/32/64, int64, float, double) are registered,
// and objects that list `properties` without saying `additionalProperties` are closed, so a
// misspelt key (which a real Qdrant may silently ignore) is reported. --lax keeps them open.
//
// Admin routes (never validated): GET /__standin/stats (POST /__standin/stats/reset zeroes them),
// POST /__standin/faults, GET /__standin/faults,
// GET /__standin/dump?collection=NAME (JSON lines, sorted by id), GET /__standin/collections
// (status, threshold, history of each collection), POST /__standin/reset (everything).
// Stats: requests (Qdrant API calls), invalid (schema violations, unknown routes / parameters,
// bodies over the size limit: client bugs), rejected (valid JSON that Qdrant would refuse:
// dimensions, vector names, 409 on create...), not_found (404 on a missing collection or point:
// normal when a client checks for existence), unmodelled (501: a valid request the stand-in does
// not model), auth_failures, api_key_seen, faults_injected, retries_seen (identical upsert /
// delete bodies received again), by_route (operationId), by_status, invalid_samples,
// rejected_samples, max_body_bytes, max_in_flight, upserted_points, upsert_wait, search_params.
//
// gRPC (issue 18, grpc.mjs): with --grpc-port the same process also serves Qdrant's Collections
// and Points gRPC services (@grpc/grpc-js + @grpc/proto-loader over the official protos) on a
// second port, over the same collections and points, with the same validation (wire check
// against the protos, then the equivalent REST body against the OpenAPI schema) and faults
// (grpc_status, reset_next, transport).  --tls-cert/--tls-key serve both ports over TLS.
//
// usage: node server.mjs [--port N|0] [--port-file FILE] [--openapi FILE] [--oracle DIR]
//                        [--api-key KEY] [--log FILE] [--optimize-ms MS] [--max-body-mb MB] [--lax]
//                        [--grpc-port N|0] [--grpc-port-file FILE] [--proto DIR] [--grpc-max-mb MB]
//                        [--tls-cert FILE --tls-key FILE]
// Binds 127.0.0.1 only; stops on SIGTERM / SIGINT.
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, renameSync, appendFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { compileFilter, FilterError } from './filter.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../../..');
const DEFAULT_OPENAPI = process.env.VF_SHARED
  ? path.join(process.env.VF_SHARED, 'qdrant/openapi.json')
  : path.resolve(REPO, '../shared/qdrant/openapi.json');
const DEFAULT_ORACLE = path.join(REPO, 'tests/oracle');
const DEFAULT_PROTO = process.env.VF_SHARED
  ? path.join(process.env.VF_SHARED, 'qdrant/proto')
  : path.resolve(REPO, '../shared/qdrant/proto');

// ---------------------------------------------------------------- JSON with 64-bit integers
const BIG_TAG = '\u0000big:';
const TOKEN_RE = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

// Parses a request body. Integers beyond 2^53 (point ids up to 2^64-1) come back as BigInt in
// `value`; `plain` is the ordinary JSON.parse result (used for schema validation).
export function parseJson(text) {
  const plain = JSON.parse(text);
  let needs = false;
  // fast pre-check: a run of 16+ digits that is not part of a fraction or an exponent
  if (!/(?<![\d.eE+-])\d{16,}(?![\d.eE])/.test(text)) return { plain, value: plain };
  for (const m of text.matchAll(TOKEN_RE)) {
    const t = m[0];
    if (t[0] !== '"' && t.length > 15 && !/[.eE]/.test(t) && !Number.isSafeInteger(Number(t))) { needs = true; break; }
  }
  if (!needs) return { plain, value: plain };
  const tagged = text.replace(TOKEN_RE, (t) =>
    t[0] !== '"' && t.length > 15 && !/[.eE]/.test(t) && !Number.isSafeInteger(Number(t)) ? `"\\u0000big:${t}"` : t);
  const value = JSON.parse(tagged, (k, v) => (typeof v === 'string' && v.startsWith(BIG_TAG) ? BigInt(v.slice(BIG_TAG.length)) : v));
  return { plain, value };
}

// JSON.stringify that prints BigInt as a bare integer.
export function stringify(obj) {
  let big = false;
  const s = JSON.stringify(obj, (k, v) => {
    if (typeof v === 'bigint') { big = true; return BIG_TAG + v.toString(); }
    return v;
  });
  return big ? s.replace(/"\\u0000big:(-?\d+)"/g, '$1') : s;
}

// ---------------------------------------------------------------- schema
const KEEP_OPEN = new Set(['description', 'default', 'deprecated', 'example', 'title']);

function preprocess(node, close) {
  if (Array.isArray(node)) return node.map((x) => preprocess(x, close));
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'example') continue;
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = {};
      for (const [pk, pv] of Object.entries(v)) out.properties[pk] = preprocess(pv, close);
    } else out[k] = preprocess(v, close);
  }
  if (close && out.type === 'object' && out.properties && out.additionalProperties === undefined)
    out.additionalProperties = false;
  if (out.nullable === true) {
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum.push(null);
    if (out.type === undefined) {
      delete out.nullable;
      const rest = Object.keys(out).filter((k) => !KEEP_OPEN.has(k));
      if (rest.length === 0) return { type: 'null' };
      return { anyOf: [out, { type: 'null' }] };
    }
  }
  return out;
}

const U64_MAX = 18446744073709551615;
const FORMATS = {
  uint: (x) => Number.isInteger(x) && x >= 0 && x <= U64_MAX,
  uint64: (x) => Number.isInteger(x) && x >= 0 && x <= U64_MAX,
  uint32: (x) => Number.isInteger(x) && x >= 0 && x <= 4294967295,
  uint16: (x) => Number.isInteger(x) && x >= 0 && x <= 65535,
  uint8: (x) => Number.isInteger(x) && x >= 0 && x <= 255,
  int64: (x) => Number.isInteger(x),
  int32: (x) => Number.isInteger(x) && x >= -2147483648 && x <= 2147483647,
  float: (x) => Number.isFinite(x),
  double: (x) => Number.isFinite(x),
};

// Loads the OpenAPI document and returns {routes, validateRef(name) -> fn, responseValidator(op, code)}.
export function loadSpec({ openapi = DEFAULT_OPENAPI, oracle = DEFAULT_ORACLE, lax = false } = {}) {
  const req = createRequire(path.resolve(oracle, 'package.json'));
  const Ajv = req('ajv').default || req('ajv');
  const addFormats = req('ajv-formats').default || req('ajv-formats');
  const spec = JSON.parse(readFileSync(openapi, 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('partial-date-time', true);
  for (const [name, fn] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'number', validate: fn });
  ajv.addSchema({ components: { schemas: preprocess(spec.components.schemas, !lax) } }, 'qdrant');
  const cache = new Map();
  const compile = (schema) => {
    const key = JSON.stringify(schema);
    let fn = cache.get(key);
    if (!fn) {
      const fixed = JSON.parse(JSON.stringify(preprocess(schema, !lax)).replaceAll('"$ref":"#/', '"$ref":"qdrant#/'));
      fn = ajv.compile(fixed);
      cache.set(key, fn);
    }
    return fn;
  };
  const routes = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || !op.operationId) continue;
      const names = [];
      const re = new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (m, n) => { names.push(n); return '([^/]+)'; }) + '$');
      const params = (op.parameters || []).concat(item.parameters || []);
      const body = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
      routes.push({
        method: method.toUpperCase(), path: p, re, names, op: op.operationId, params,
        bodySchema: body ? body.schema : null, bodyRequired: !!(op.requestBody && op.requestBody.required),
        responses: op.responses || {},
      });
    }
  }
  // literal segments first, so /collections/aliases wins over /collections/{collection_name}
  routes.sort((a, b) => a.names.length - b.names.length);
  const validator = (schema) => compile(schema);
  const errorsText = (errors) => (errors || []).map((e) => {
    let m = `${e.instancePath || '/'} ${e.message}`;
    if (e.params && e.params.additionalProperty !== undefined) m += `: \`${e.params.additionalProperty}\``;
    if (e.params && e.params.allowedValues) m += ` ${JSON.stringify(e.params.allowedValues)}`;
    return m;
  }).join('; ');
  const responseValidator = (opId, code = '200') => {
    const r = routes.find((x) => x.op === opId);
    const c = r && r.responses[code] && r.responses[code].content && r.responses[code].content['application/json'];
    return c ? compile(c.schema) : null;
  };
  return { spec, routes, validator, errorsText, responseValidator };
}

// ---------------------------------------------------------------- ids and vectors
const UUID_RE = /^(?:urn:uuid:)?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})$/i;

// -> {key, out} or null. key orders integers before UUIDs (as Qdrant's ExtendedPointId does).
function normId(id) {
  if (typeof id === 'bigint') return id >= 0n && id <= 18446744073709551615n ? { key: 'n' + id.toString().padStart(20, '0'), out: id } : null;
  if (typeof id === 'number') return Number.isSafeInteger(id) && id >= 0 ? { key: 'n' + String(id).padStart(20, '0'), out: id } : null;
  if (typeof id === 'string') {
    const m = UUID_RE.exec(id);
    if (!m) return null;
    const u = m.slice(1).join('-').toLowerCase();
    return { key: 'u' + u, out: u };
  }
  return null;
}

const isNumArray = (v) => Array.isArray(v) && v.every((x) => typeof x === 'number');
const isNumMatrix = (v) => Array.isArray(v) && v.length > 0 && v.every(isNumArray);

function normalize(f32) {
  let s = 0;
  for (let i = 0; i < f32.length; i++) s += f32[i] * f32[i];
  const out = new Float32Array(f32.length);
  if (s === 0) return out;
  const inv = 1 / Math.sqrt(s);
  for (let i = 0; i < f32.length; i++) out[i] = f32[i] * inv;
  return out;
}

function score(dist, a, b) {
  let r = 0;
  switch (dist) {
    case 'Euclid': for (let i = 0; i < a.length; i++) { const d = a[i] - b[i]; r += d * d; } return Math.sqrt(r);
    case 'Manhattan': for (let i = 0; i < a.length; i++) r += Math.abs(a[i] - b[i]); return r;
    default: for (let i = 0; i < a.length; i++) r += a[i] * b[i]; return r; // Dot, Cosine (normalised)
  }
}
const smallerIsBetter = (dist) => dist === 'Euclid' || dist === 'Manhattan';

class HttpError extends Error {
  constructor(code, msg, kind = 'rejected') { super(msg); this.code = code; this.kind = kind; }
}

// ---------------------------------------------------------------- the model
const HNSW_DEFAULT = { m: 16, ef_construct: 100, full_scan_threshold: 10000, max_indexing_threads: 0, on_disk: false };
const OPT_DEFAULT = {
  deleted_threshold: 0.2, vacuum_min_vector_number: 1000, default_segment_number: 0, max_segment_size: null,
  memmap_threshold: null, indexing_threshold: 10000, flush_interval_sec: 5, max_optimization_threads: null,
};
const WAL_DEFAULT = { wal_capacity_mb: 32, wal_segments_ahead: 0 };
const mergeDiff = (base, diff) => {
  const out = { ...base };
  for (const [k, v] of Object.entries(diff || {})) if (v !== null && v !== undefined) out[k] = v;
  return out;
};

class Collection {
  constructor(name, body, standin) {
    this.name = name;
    this.standin = standin;
    this.points = new Map();
    this.sorted = null;
    this.opId = 0;
    this.dense = new Map(); // name -> {size, distance, multi}
    this.sparse = new Map();
    let vectors = body.vectors === undefined || body.vectors === null ? {} : body.vectors;
    this.unnamed = typeof vectors.size === 'number' && typeof vectors.distance === 'string';
    const named = this.unnamed ? { '': vectors } : vectors;
    for (const [n, p] of Object.entries(named))
      this.dense.set(n, { size: p.size, distance: p.distance, multi: !!(p.multivector_config) });
    for (const n of Object.keys(body.sparse_vectors || {})) {
      if (this.dense.has(n)) throw new HttpError(400, `Wrong input: Vector name \`${n}\` is used for both a dense and a sparse vector`);
      this.sparse.set(n, body.sparse_vectors[n] || {});
    }
    const opt = mergeDiff(OPT_DEFAULT, { indexing_threshold: standin.defaultIndexingThreshold });
    this.config = {
      params: {
        vectors, shard_number: body.shard_number ?? 1, replication_factor: body.replication_factor ?? 1,
        write_consistency_factor: body.write_consistency_factor ?? 1, on_disk_payload: body.on_disk_payload ?? true,
        ...(body.sharding_method ? { sharding_method: body.sharding_method } : {}),
        ...(body.sparse_vectors ? { sparse_vectors: body.sparse_vectors } : {}),
      },
      hnsw_config: mergeDiff(HNSW_DEFAULT, body.hnsw_config),
      optimizer_config: mergeDiff(opt, body.optimizers_config),
      wal_config: mergeDiff(WAL_DEFAULT, body.wal_config),
      quantization_config: body.quantization_config ?? null,
    };
    if (body.metadata) this.config.metadata = { ...body.metadata };
    this.unindexed = 0;        // points written while indexing was off
    this.optimizingUntil = 0;  // yellow until then
    this.grey = false;         // an optimisation is pending until the next PATCH
    this.error = null;         // optimizer error (red)
    this.indexed = 0;
    this.history = [`create indexing_threshold=${this.config.optimizer_config.indexing_threshold}`];
  }

  status() {
    if (this.error) return 'red';
    if (this.grey) return 'grey';
    if (Date.now() < this.optimizingUntil) return 'yellow';
    return 'green';
  }

  // an optimisation starts now: yellow for a moment, or red with an injected optimizer error
  optimize(why) {
    const f = this.standin.faults;
    this.history.push(`optimize (${why})`);
    if (f.optimizer_error) {
      this.error = f.optimizer_error;
      this.history.push(`optimizer error: ${f.optimizer_error}`);
      return;
    }
    this.optimizingUntil = Date.now() + f.optimize_ms;
    this.unindexed = 0;
    this.indexed = this.points.size;
  }

  info() {
    const st = this.status();
    const threshold = this.config.optimizer_config.indexing_threshold;
    return {
      status: st,
      optimizer_status: this.error ? { error: this.error } : 'ok',
      indexed_vectors_count: threshold > 0 && st === 'green' ? this.indexed * Math.max(1, this.dense.size) : 0,
      points_count: this.points.size,
      segments_count: Math.max(1, this.config.params.shard_number) * 2,
      config: this.config,
      payload_schema: this.standin.payloadIndexes.get(this.name) || {},
    };
  }

  // checks one point's vector struct against the config -> Map name -> stored vector
  parseVectors(v, where) {
    const out = new Map();
    const put = (name, val) => {
      const d = this.dense.get(name);
      if (d) {
        if (d.multi) {
          if (!isNumMatrix(val)) throw new HttpError(400, `Wrong input: ${where}: vector \`${name}\` is a multivector: expected [[...], ...]`);
          for (const row of val) if (row.length !== d.size) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${d.size}, got ${row.length}`);
          out.set(name, val.map((r) => Float32Array.from(r)));
        } else {
          if (!isNumArray(val)) throw new HttpError(400, `Wrong input: ${where}: vector \`${name}\` is dense: expected an array of numbers`);
          if (val.length !== d.size) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${d.size}, got ${val.length}`);
          out.set(name, Float32Array.from(val));
        }
        return;
      }
      if (this.sparse.has(name)) {
        if (!val || typeof val !== 'object' || !Array.isArray(val.indices) || !Array.isArray(val.values))
          throw new HttpError(400, `Wrong input: ${where}: vector \`${name}\` is sparse: expected {indices, values}`);
        if (val.indices.length !== val.values.length)
          throw new HttpError(422, `Validation error in JSON body: [${where}.${name}: indices and values must be the same length]`);
        if (new Set(val.indices).size !== val.indices.length)
          throw new HttpError(422, `Validation error in JSON body: [${where}.${name}.indices: must be unique]`);
        out.set(name, { indices: Uint32Array.from(val.indices), values: Float32Array.from(val.values) });
        return;
      }
      throw new HttpError(400, `Wrong input: Not existing vector name error: ${name}`);
    };
    if (Array.isArray(v)) put('', v);
    else if (v && typeof v === 'object') for (const [n, val] of Object.entries(v)) put(n, val);
    else throw new HttpError(400, `Wrong input: ${where}: unsupported vector`);
    return out;
  }

  upsert(points) {
    const staged = points.map((p, i) => {
      const id = normId(p.id);
      if (!id) throw new HttpError(400, `Wrong input: points[${i}].id: not an unsigned integer or UUID: ${stringify(p.id)}`);
      const payload = p.payload === undefined || p.payload === null ? {} : p.payload;
      if (typeof payload !== 'object' || Array.isArray(payload)) throw new HttpError(400, `Wrong input: points[${i}].payload: not an object`);
      return { key: id.key, id: id.out, vectors: this.parseVectors(p.vector, `points[${i}].vector`), payload };
    });
    this.opId += 1;
    for (const p of staged) {
      p.version = this.opId;
      this.points.set(p.key, p);
    }
    this.sorted = null;
    const threshold = this.config.optimizer_config.indexing_threshold;
    if (threshold > 0) this.optimize('upsert');
    else this.unindexed += staged.length;
    return this.opId;
  }

  patch(body) {
    const before = this.config.optimizer_config.indexing_threshold;
    const mBefore = this.config.hnsw_config.m;
    if (body.optimizers_config) this.config.optimizer_config = mergeDiff(this.config.optimizer_config, body.optimizers_config);
    if (body.hnsw_config) this.config.hnsw_config = mergeDiff(this.config.hnsw_config, body.hnsw_config);
    // per-vector diffs (UpdateVectors: hnsw_config, quantization_config, on_disk) and sparse params
    const vmBefore = {};
    if (body.vectors) {
      const named = this.unnamed ? { '': body.vectors } : body.vectors;
      for (const [n, d] of Object.entries(named)) {
        const cur = this.unnamed ? this.config.params.vectors : this.config.params.vectors[n];
        if (!cur || !this.dense.has(n)) throw new HttpError(400, `Wrong input: Not existing vector name error: ${n}`);
        vmBefore[n] = cur.hnsw_config ? cur.hnsw_config.m : undefined;
        if (d.hnsw_config) cur.hnsw_config = mergeDiff(cur.hnsw_config || {}, d.hnsw_config);
        if (d.quantization_config !== undefined && d.quantization_config !== null)
          if (d.quantization_config === 'Disabled') delete cur.quantization_config; else cur.quantization_config = d.quantization_config;
        if (d.on_disk !== undefined && d.on_disk !== null) cur.on_disk = d.on_disk;
      }
    }
    if (body.sparse_vectors) {
      for (const [n, d] of Object.entries(body.sparse_vectors)) {
        if (!this.sparse.has(n)) throw new HttpError(400, `Wrong input: Not existing vector name error: ${n}`);
        const cur = this.config.params.sparse_vectors[n] || (this.config.params.sparse_vectors[n] = {});
        if (d.index) cur.index = mergeDiff(cur.index || {}, d.index);
        if (d.modifier) cur.modifier = d.modifier;
      }
    }
    if (body.params) this.config.params = mergeDiff(this.config.params, body.params);
    if (body.quantization_config !== undefined && body.quantization_config !== null)
      this.config.quantization_config = body.quantization_config === 'Disabled' ? null : body.quantization_config;
    if (body.metadata) { // merged; a null value removes the key (UpdateCollection.metadata)
      const m = { ...(this.config.metadata || {}) };
      for (const [k, v] of Object.entries(body.metadata)) { if (v === null) delete m[k]; else m[k] = v; }
      this.config.metadata = m;
    }
    const after = this.config.optimizer_config.indexing_threshold;
    this.history.push(`patch indexing_threshold ${before}->${after}`);
    const mAfter = this.config.hnsw_config.m;
    if (mAfter !== mBefore) this.history.push(`patch hnsw m ${mBefore}->${mAfter}`);
    for (const [n, m0] of Object.entries(vmBefore)) {
      const cur = this.unnamed ? this.config.params.vectors : this.config.params.vectors[n];
      const m1 = cur.hnsw_config ? cur.hnsw_config.m : undefined;
      if (m1 !== m0) this.history.push(`patch vector ${n} hnsw m ${m0}->${m1}`);
    }
    if (this.error) return;
    if (this.grey) { this.grey = false; this.optimize('triggered by a PATCH while grey'); return; }
    if (mBefore === 0 && mAfter > 0 && this.points.size > 0) { this.optimize('hnsw graph build (m restored)'); return; }
    if (body.hnsw_config || body.quantization_config || body.vectors) {
      if (this.points.size > 0 && after > 0 && mAfter > 0) { this.optimize('index settings changed'); return; }
    }
    if (after > 0 && this.unindexed > 0) {
      if (this.standin.faults.grey) {
        this.standin.faults.grey = false;
        this.grey = true;
        this.history.push('grey: optimisation pending until the next PATCH');
      } else this.optimize('indexing re-enabled');
    }
  }

  sortedKeys() {
    if (!this.sorted) this.sorted = [...this.points.keys()].sort();
    return this.sorted;
  }

  // Qdrant API view of a stored vector set (Cosine normalised)
  vectorOut(p, sel) {
    const o = {};
    for (const [n, v] of p.vectors) {
      if (Array.isArray(sel) && !sel.includes(n)) continue;
      const d = this.dense.get(n);
      if (d) {
        const cos = d.distance === 'Cosine';
        o[n] = d.multi ? v.map((r) => Array.from(cos ? normalize(r) : r)) : Array.from(cos ? normalize(v) : v);
      } else o[n] = { indices: Array.from(v.indices), values: Array.from(v.values) };
    }
    return this.unnamed && !Array.isArray(sel) ? o[''] : o;
  }

  // the stand-in's raw view (as received, float32)
  dumpPoint(p) {
    const vectors = {};
    for (const [n, v] of p.vectors) {
      if (v instanceof Float32Array) vectors[n] = Array.from(v);
      else if (Array.isArray(v)) vectors[n] = v.map((r) => Array.from(r));
      else vectors[n] = { indices: Array.from(v.indices), values: Array.from(v.values) };
    }
    return { id: p.id, vector: vectors, payload: p.payload };
  }

  record(p, withPayload, withVector) {
    const r = { id: p.id };
    const pl = selectPayload(p.payload, withPayload);
    if (pl !== undefined) r.payload = pl;
    if (withVector) r.vector = this.vectorOut(p, withVector);
    return r;
  }

  // query -> scorer(point) -> number|null, and the order
  scorer(query, using) {
    const name = using ?? '';
    if (query && typeof query === 'object' && !Array.isArray(query) && 'nearest' in query) {
      if (query.mmr) throw new HttpError(501, 'Service internal error: the stand-in does not model mmr', 'unmodelled');
      query = query.nearest;
    }
    if (typeof query === 'string' || typeof query === 'number' || typeof query === 'bigint') {
      const id = normId(query);
      const p = id && this.points.get(id.key);
      if (!p) throw new HttpError(404, `Not found: No point with id ${stringify(query)} found`, 'not_found');
      const v = p.vectors.get(name);
      if (!v) throw new HttpError(400, `Wrong input: point ${stringify(query)} has no vector \`${name}\``);
      query = v instanceof Float32Array ? Array.from(v) : Array.isArray(v) ? v.map((r) => Array.from(r)) : { indices: Array.from(v.indices), values: Array.from(v.values) };
    }
    const d = this.dense.get(name);
    if (d) {
      const cos = d.distance === 'Cosine';
      if (d.multi) {
        const q = isNumMatrix(query) ? query : isNumArray(query) ? [query] : null;
        if (!q || q.some((r) => r.length !== d.size)) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${d.size}`);
        const qs = q.map((r) => (cos ? normalize(Float32Array.from(r)) : Float32Array.from(r)));
        return { better: smallerIsBetter(d.distance) ? 'min' : 'max', fn: (p) => {
          const v = p.vectors.get(name);
          if (!v) return null;
          let total = 0;
          for (const qr of qs) {
            let best = null;
            for (const r of v) {
              const s = score(d.distance, qr, cos ? normalize(r) : r);
              if (best === null || (smallerIsBetter(d.distance) ? s < best : s > best)) best = s;
            }
            total += best;
          }
          return total;
        } };
      }
      if (!isNumArray(query)) throw new HttpError(400, `Wrong input: vector \`${name}\` is dense: the query must be an array of numbers`);
      if (query.length !== d.size) throw new HttpError(400, `Wrong input: Vector dimension error: expected dim: ${d.size}, got ${query.length}`);
      const q = cos ? normalize(Float32Array.from(query)) : Float32Array.from(query);
      return { better: smallerIsBetter(d.distance) ? 'min' : 'max', fn: (p) => {
        const v = p.vectors.get(name);
        if (!v) return null;
        if (!cos) return score(d.distance, q, v);
        if (!p.unit) p.unit = new Map();
        let u = p.unit.get(name);
        if (!u) { u = normalize(v); p.unit.set(name, u); }
        return score(d.distance, q, u);
      } };
    }
    if (this.sparse.has(name)) {
      if (!query || !Array.isArray(query.indices)) throw new HttpError(400, `Wrong input: vector \`${name}\` is sparse: the query must be {indices, values}`);
      const q = new Map(query.indices.map((ix, i) => [ix, query.values[i]]));
      return { better: 'max', fn: (p) => {
        const v = p.vectors.get(name);
        if (!v) return null;
        let s = 0, hit = false;
        for (let i = 0; i < v.indices.length; i++) { const w = q.get(v.indices[i]); if (w !== undefined) { s += w * v.values[i]; hit = true; } }
        return hit ? s : null;
      } };
    }
    throw new HttpError(400, `Wrong input: Not existing vector name error: ${name}`);
  }

  // the payload filter of a request (filter.mjs: Qdrant's documented semantics) -> point predicate
  filterOf(f) {
    if (f === undefined || f === null) return () => true;
    try {
      return compileFilter(f, normId);
    } catch (e) {
      if (e instanceof FilterError) throw new HttpError(e.unmodelled ? 501 : 400, `${e.unmodelled ? 'Service internal error' : 'Wrong input'}: ${e.message}`, e.unmodelled ? 'unmodelled' : 'rejected');
      throw e;
    }
  }

  query(body) {
    for (const k of ['prefetch', 'lookup_from', 'shard_key'])
      if (body[k] !== undefined && body[k] !== null)
        throw new HttpError(501, `Service internal error: the stand-in does not model \`${k}\` in queries`, 'unmodelled');
    const keep = this.filterOf(body.filter);
    if (body.filter) this.standin.stats.filtered_queries += 1;
    const limit = body.limit ?? 10, offset = body.offset ?? 0;
    const withPayload = body.with_payload ?? false, withVector = body.with_vector ?? false;
    if (body.query === undefined || body.query === null) {
      const keys = this.sortedKeys().filter((k) => keep(this.points.get(k))).slice(offset, offset + limit);
      return { points: keys.map((k) => ({ ...this.record(this.points.get(k), withPayload, withVector), version: this.points.get(k).version, score: 0 })) };
    }
    const { better, fn } = this.scorer(body.query, body.using);
    const scored = [];
    for (const p of this.points.values()) {
      if (!keep(p)) continue;
      const s = fn(p);
      if (s === null) continue;
      if (body.score_threshold !== undefined && body.score_threshold !== null &&
          (better === 'max' ? s < body.score_threshold : s > body.score_threshold)) continue;
      scored.push([s, p]);
    }
    scored.sort((a, b) => (better === 'max' ? b[0] - a[0] : a[0] - b[0]) || (a[1].key < b[1].key ? -1 : 1));
    return { points: scored.slice(offset, offset + limit).map(([s, p]) => ({
      ...this.record(p, withPayload, withVector), version: p.version, score: Math.fround(s) })) };
  }
}

function selectPayload(payload, sel) {
  if (sel === false || sel === null || sel === undefined) return undefined;
  if (sel === true) return payload;
  if (Array.isArray(sel)) return Object.fromEntries(Object.entries(payload).filter(([k]) => sel.includes(k)));
  if (sel.include) return Object.fromEntries(Object.entries(payload).filter(([k]) => sel.include.includes(k)));
  if (sel.exclude) return Object.fromEntries(Object.entries(payload).filter(([k]) => !sel.exclude.includes(k)));
  return payload;
}

// PointsBatch -> list of PointStruct-like objects
function batchToPoints(b) {
  const n = b.ids.length;
  const payloads = b.payloads || [];
  if (b.payloads && b.payloads.length !== n) throw new HttpError(400, `Wrong input: batch: ${n} ids but ${b.payloads.length} payloads`);
  const vec = b.vectors;
  let at;
  if (Array.isArray(vec)) {
    if (vec.length !== n) throw new HttpError(400, `Wrong input: batch: ${n} ids but ${vec.length} vectors`);
    at = (i) => vec[i];
  } else {
    for (const [name, list] of Object.entries(vec || {}))
      if (list.length !== n) throw new HttpError(400, `Wrong input: batch: ${n} ids but ${list.length} vectors \`${name}\``);
    at = (i) => Object.fromEntries(Object.entries(vec || {}).map(([name, list]) => [name, list[i]]));
  }
  return b.ids.map((id, i) => ({ id, vector: at(i), payload: payloads[i] ?? null }));
}

const FAULTS_DEFAULT = () => ({
  fail_next: 0, status: 503, retry_after: null, delay_ms: 0, delay_next: null, only: null, apply: false,
  optimizer_error: null, grey: false, optimize_ms: 300,
  // gRPC (grpc.mjs): gRPC status codes to fail with instead of `status`; client connections to
  // reset on their next bytes; `transport` limits the faults to "rest" or "grpc" calls
  grpc_status: null, reset_next: 0, transport: null, message: null,
});

const STATS_DEFAULT = () => ({
  requests: 0, invalid: 0, rejected: 0, not_found: 0, unmodelled: 0, auth_failures: 0, faults_injected: 0, retries_seen: 0,
  by_route: {}, by_status: {}, invalid_samples: [], rejected_samples: [], max_body_bytes: 0, max_in_flight: 0,
  upserted_points: 0, upsert_wait: { true: 0, false: 0 }, search_params: [], api_key_seen: 0,
  filtered_queries: 0,
  rest_requests: 0, grpc_requests: 0, by_rpc: {}, by_grpc_status: {}, max_grpc_message_bytes: 0,
  grpc_connections: 0, grpc_resets: 0,
});

// ---------------------------------------------------------------- the server
export async function startStandin(opts = {}) {
  const spec = loadSpec(opts);
  const st = {
    collections: new Map(), payloadIndexes: new Map(), faults: FAULTS_DEFAULT(), stats: STATS_DEFAULT(),
    bodyHashes: new Set(), inFlight: 0, faultSeq: 0, defaultIndexingThreshold: opts.defaultIndexingThreshold ?? 10000,
  };
  if (opts.optimizeMs !== undefined) st.faults.optimize_ms = opts.optimizeMs;
  const maxBody = Math.floor((opts.maxBodyMb ?? 32) * 1024 * 1024);
  const apiKey = opts.apiKey || null;
  const log = opts.log ? (line) => { try { appendFileSync(opts.log, line + '\n'); } catch { /* logging is best effort */ } } : null;
  const started = process.hrtime.bigint();
  const note = (list, entry) => { if (list.length < 50) list.push(entry); };

  const send = (res, code, obj, headers = {}) => {
    const body = typeof obj === 'string' ? obj : stringify(obj);
    if (!(res.req && res.req.url.startsWith('/__standin/'))) st.stats.by_status[code] = (st.stats.by_status[code] || 0) + 1;
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const ok = (res, result, t0) => send(res, 200, { result, status: 'ok', time: Number(process.hrtime.bigint() - t0) / 1e9 });
  const err = (res, code, msg, headers) => send(res, code, { status: { error: msg }, time: 0 }, headers);

  const match = (method, pathname) => {
    let methodMismatch = false;
    for (const r of spec.routes) {
      const m = r.re.exec(pathname);
      if (!m) continue;
      if (r.method !== method) { methodMismatch = true; continue; }
      const params = {};
      r.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1]); });
      return { route: r, params };
    }
    return { route: null, methodMismatch };
  };

  const coerce = (s) => {
    if (s === 'true') return true;
    if (s === 'false') return false;
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    return s;
  };

  // validates path and query parameters -> error string or null
  const checkParams = (route, params, query) => {
    const known = new Map(route.params.map((p) => [`${p.in}:${p.name}`, p]));
    for (const k of query.keys())
      if (!known.has(`query:${k}`)) return `unknown query parameter \`${k}\` for ${route.op}`;
    for (const p of route.params) {
      if (p.in !== 'query' && p.in !== 'path') continue;
      const raw = p.in === 'path' ? params[p.name] : query.get(p.name);
      if (raw === null || raw === undefined) {
        if (p.required) return `missing ${p.in} parameter \`${p.name}\``;
        continue;
      }
      if (p.in === 'path' && raw === '') return `empty path parameter \`${p.name}\``;
      const v = spec.validator(p.schema || {});
      if (!v(coerce(raw)) && !v(raw)) return `${p.in} parameter \`${p.name}\`=${JSON.stringify(raw)}: ${spec.errorsText(v.errors)}`;
    }
    return null;
  };

  // the fault switches, shared by REST and gRPC: -> {delayMs, fault} (fault: a status or null)
  const takeFault = (op, isGrpc) => {
    const f = st.faults;
    const applies = (!f.only || (Array.isArray(f.only) ? f.only.includes(op) : f.only === op)) &&
      (!f.transport || f.transport === (isGrpc ? 'grpc' : 'rest'));
    let delayMs = 0;
    if (applies && f.delay_ms > 0 && (f.delay_next === null || f.delay_next > 0)) {
      if (f.delay_next !== null) f.delay_next -= 1;
      delayMs = f.delay_ms;
    }
    let fault = null;
    if (applies && f.fail_next > 0) {
      f.fail_next -= 1;
      st.stats.faults_injected += 1;
      const list = isGrpc && f.grpc_status !== null && f.grpc_status !== undefined ? f.grpc_status : f.status;
      fault = Array.isArray(list) ? list[st.faultSeq++ % list.length] : list;
    }
    return { delayMs, fault };
  };

  const coll = (name) => {
    const c = st.collections.get(name);
    if (!c) throw new HttpError(404, `Not found: Collection \`${name}\` doesn't exist!`, 'not_found');
    return c;
  };

  // the modelled operations: (params, body, query) -> result
  const ops = {
    root: () => ({ title: 'qdrant - vector search engine (vforge test stand-in)', version: '1.16.0' }),
    get_collections: () => ({ collections: [...st.collections.keys()].map((name) => ({ name })) }),
    collection_exists: (p) => ({ exists: st.collections.has(p.collection_name) }),
    get_collection: (p) => coll(p.collection_name).info(),
    create_collection: (p, b) => {
      if (st.collections.has(p.collection_name)) throw new HttpError(409, `Wrong input: Collection \`${p.collection_name}\` already exists!`);
      if (b.init_from) throw new HttpError(501, 'Service internal error: the stand-in does not model init_from', 'unmodelled');
      st.collections.set(p.collection_name, new Collection(p.collection_name, b, st));
      return true;
    },
    update_collection: (p, b) => { coll(p.collection_name).patch(b); return true; },
    delete_collection: (p) => { st.payloadIndexes.delete(p.collection_name); return st.collections.delete(p.collection_name); },
    upsert_points: (p, b, q) => {
      const c = coll(p.collection_name);
      for (const k of ['shard_key', 'update_filter'])
        if (b[k] !== undefined && b[k] !== null) throw new HttpError(501, `Service internal error: the stand-in does not model \`${k}\``, 'unmodelled');
      if (b.update_mode && b.update_mode !== 'upsert') throw new HttpError(501, 'Service internal error: the stand-in models update_mode upsert only', 'unmodelled');
      const points = b.batch ? batchToPoints(b.batch) : b.points;
      const opId = c.upsert(points);
      st.stats.upserted_points += points.length;
      const wait = q.get('wait') === 'true';
      st.stats.upsert_wait[wait] += 1;
      return { operation_id: opId, status: wait ? 'completed' : 'acknowledged' };
    },
    get_points: (p, b) => {
      const c = coll(p.collection_name);
      return b.ids.map((id) => normId(id)).filter((id) => id && c.points.has(id.key))
        .map((id) => c.record(c.points.get(id.key), b.with_payload ?? true, b.with_vector ?? false));
    },
    delete_points: (p, b, q) => {
      const c = coll(p.collection_name);
      if (!Array.isArray(b.points)) throw new HttpError(501, 'Service internal error: the stand-in deletes by id list only', 'unmodelled');
      for (const id of b.points) { const n = normId(id); if (n) c.points.delete(n.key); }
      c.sorted = null;
      c.opId += 1;
      return { operation_id: c.opId, status: q.get('wait') === 'true' ? 'completed' : 'acknowledged' };
    },
    count_points: (p, b) => {
      const c = coll(p.collection_name);
      if (!b.filter) return { count: c.points.size };
      const keep = c.filterOf(b.filter);
      let n = 0;
      for (const pt of c.points.values()) n += keep(pt) ? 1 : 0;
      return { count: n };
    },
    scroll_points: (p, b) => {
      const c = coll(p.collection_name);
      for (const k of ['order_by', 'shard_key'])
        if (b[k] !== undefined && b[k] !== null) throw new HttpError(501, `Service internal error: the stand-in does not model \`${k}\` in scroll`, 'unmodelled');
      const keep = c.filterOf(b.filter);
      const keys = c.sortedKeys().filter((k) => keep(c.points.get(k)));
      let start = 0;
      if (b.offset !== undefined && b.offset !== null) {
        const id = normId(b.offset);
        if (!id) throw new HttpError(400, 'Wrong input: bad offset id');
        let lo = 0, hi = keys.length;
        while (lo < hi) { const mid = (lo + hi) >> 1; if (keys[mid] < id.key) lo = mid + 1; else hi = mid; }
        start = lo;
      }
      const limit = b.limit ?? 10;
      const page = keys.slice(start, start + limit);
      const next = keys[start + limit];
      return {
        points: page.map((k) => c.record(c.points.get(k), b.with_payload ?? true, b.with_vector ?? false)),
        next_page_offset: next === undefined ? null : c.points.get(next).id,
      };
    },
    query_points: (p, b) => {
      const c = coll(p.collection_name);
      if (b.params) note(st.stats.search_params, b.params);
      return c.query(b);
    },
    query_batch_points: (p, b) => {
      const c = coll(p.collection_name);
      return b.searches.map((s) => { if (s.params) note(st.stats.search_params, s.params); return c.query(s); });
    },
    create_field_index: (p, b, q) => {
      const c = coll(p.collection_name);
      const idx = st.payloadIndexes.get(c.name) || {};
      const schema = typeof b.field_schema === 'string' ? b.field_schema : (b.field_schema && b.field_schema.type) || 'keyword';
      idx[b.field_name] = { data_type: schema, points: c.points.size };
      st.payloadIndexes.set(c.name, idx);
      c.opId += 1;
      return { operation_id: c.opId, status: q.get('wait') === 'true' ? 'completed' : 'acknowledged' };
    },
  };
  const ROOT_ROUTES = { '/': 'root', '/healthz': 'healthz', '/livez': 'livez', '/readyz': 'readyz' };

  const admin = (req, res, url, text) => {
    const p = url.pathname;
    if (p === '/__standin/stats' && req.method === 'GET') return send(res, 200, st.stats);
    if (p === '/__standin/faults' && req.method === 'GET') return send(res, 200, st.faults);
    if (p === '/__standin/faults' && req.method === 'POST') {
      let b;
      try { b = text ? JSON.parse(text) : {}; } catch (e) { return err(res, 400, `faults: ${e.message}`); }
      if (b.reset) {
        st.faults = FAULTS_DEFAULT();
        if (opts.optimizeMs !== undefined) st.faults.optimize_ms = opts.optimizeMs;
      }
      st.faultSeq = 0;
      for (const [k, v] of Object.entries(b)) {
        if (k === 'reset') continue;
        if (!(k in st.faults)) return err(res, 400, `faults: unknown switch \`${k}\` (known: ${Object.keys(st.faults).join(', ')})`);
        st.faults[k] = v;
      }
      return send(res, 200, st.faults);
    }
    if (p === '/__standin/stats/reset' && req.method === 'POST') {
      st.stats = STATS_DEFAULT();
      return send(res, 200, st.stats);
    }
    if (p === '/__standin/reset' && req.method === 'POST') {
      st.collections.clear(); st.payloadIndexes.clear(); st.faults = FAULTS_DEFAULT(); st.stats = STATS_DEFAULT(); st.bodyHashes.clear();
      if (opts.optimizeMs !== undefined) st.faults.optimize_ms = opts.optimizeMs;
      return send(res, 200, { ok: true });
    }
    if (p === '/__standin/collections' && req.method === 'GET')
      return send(res, 200, [...st.collections.values()].map((c) => ({
        name: c.name, status: c.status(), points: c.points.size, unindexed: c.unindexed,
        indexing_threshold: c.config.optimizer_config.indexing_threshold, error: c.error, history: c.history,
        config: c.config })));
    if (p === '/__standin/dump' && req.method === 'GET') {
      const c = st.collections.get(url.searchParams.get('collection') || '');
      if (!c) return err(res, 404, `no collection \`${url.searchParams.get('collection')}\``);
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (const k of c.sortedKeys()) res.write(stringify(c.dumpPoint(c.points.get(k))) + '\n');
      return res.end();
    }
    return err(res, 404, `unknown stand-in admin route ${req.method} ${p}`);
  };

  const handle = async (req, res, text, bodyBytes) => {
    const t0 = process.hrtime.bigint();
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname.startsWith('/__standin/')) return admin(req, res, url, text);
    const S = st.stats;
    S.requests += 1;
    S.rest_requests += 1;
    S.max_body_bytes = Math.max(S.max_body_bytes, bodyBytes);
    const reject = (kind, code, msg, routeName) => {
      if (kind === 'invalid') { S.invalid += 1; note(S.invalid_samples, { route: routeName, method: req.method, path: url.pathname, error: msg }); }
      else if (kind === 'unmodelled') S.unmodelled += 1;
      else if (kind === 'not_found') S.not_found += 1;
      else { S.rejected += 1; note(S.rejected_samples, { route: routeName, error: msg }); }
      return err(res, code, msg);
    };
    if (ROOT_ROUTES[url.pathname] && req.method === 'GET') {
      if (url.pathname === '/') return send(res, 200, ops.root());
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(`${ROOT_ROUTES[url.pathname]} check passed`);
    }
    const { route, params, methodMismatch } = match(req.method, url.pathname);
    if (!route) return reject('invalid', methodMismatch ? 405 : 404, `${req.method} ${url.pathname}: ${methodMismatch ? 'method not allowed' : 'no such route in the Qdrant API'}`, null);
    S.by_route[route.op] = (S.by_route[route.op] || 0) + 1;
    if (apiKey !== null) {
      const given = req.headers['api-key'] || (req.headers.authorization || '').replace(/^Bearer\s+/i, '') || null;
      if (given !== apiKey) {
        S.auth_failures += 1;
        return err(res, given ? 403 : 401, given ? 'Invalid API key or JWT' : 'Must provide an API key or an Authorization bearer token');
      }
      S.api_key_seen += 1;
    }
    // validation: parameters, then the body
    const perr = checkParams(route, params, url.searchParams);
    if (perr) return reject('invalid', 400, `Format error in query: ${perr}`, route.op);
    let body = null;
    if (route.bodySchema) {
      if (text.length === 0) {
        if (route.bodyRequired || ['create_collection', 'update_collection', 'upsert_points'].includes(route.op))
          return reject('invalid', 400, `Json deserialize error: ${route.op} needs a JSON body`, route.op);
      } else {
        const ct = req.headers['content-type'] || '';
        if (!/^application\/json\b/i.test(ct)) return reject('invalid', 400, `Content type error: expected application/json, got \`${ct}\``, route.op);
        let parsed;
        try { parsed = parseJson(text); } catch (e) { return reject('invalid', 400, `Json deserialize error: ${e.message}`, route.op); }
        const v = spec.validator(route.bodySchema);
        if (!v(parsed.plain)) return reject('invalid', 400, `Format error in JSON body: ${spec.errorsText(v.errors).slice(0, 2000)}`, route.op);
        body = parsed.value;
      }
    } else if (text.length > 0) {
      return reject('invalid', 400, `${route.op} takes no request body`, route.op);
    }
    if (body === null) body = {};
    if (['upsert_points', 'batch_update', 'delete_points'].includes(route.op)) {
      const h = createHash('sha1').update(req.method + url.pathname + '\n' + text).digest('hex');
      if (st.bodyHashes.has(h)) S.retries_seen += 1; else st.bodyHashes.add(h);
    }
    // faults
    const f = st.faults;
    const { delayMs, fault } = takeFault(route.op, false);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (fault !== null && !f.apply) return failWith(res, fault, f);
    const handler = ops[route.op];
    if (!handler) return reject('unmodelled', 501, `Service internal error: the stand-in does not model ${route.op}`, route.op);
    let result;
    try {
      result = handler(params, body, url.searchParams);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      if (fault !== null) return failWith(res, fault, f);
      return reject(e.kind, e.code, e.message, route.op);
    }
    if (fault !== null) return failWith(res, fault, f);
    return ok(res, result, t0);
  };

  const failWith = (res, code, f) => {
    const headers = f.retry_after !== null && f.retry_after !== undefined ? { 'retry-after': String(f.retry_after) } : {};
    const msg = code === 429 ? 'Too many requests: rate limit (stand-in fault injection)'
      : code === 503 ? 'Service unavailable (stand-in fault injection)'
      : `Service internal error (stand-in fault injection, status ${code})`;
    return err(res, code, msg, headers);
  };

  const tls = opts.tlsCert ? { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) } : null;
  const server = (tls ? (h) => https.createServer(tls, h) : (h) => http.createServer(h))((req, res) => {
    st.inFlight += 1;
    st.stats.max_in_flight = Math.max(st.stats.max_in_flight, st.inFlight);
    const chunks = [];
    let size = 0, tooBig = false;
    req.on('data', (c) => { size += c.length; if (size > maxBody) tooBig = true; else chunks.push(c); });
    req.on('end', () => {
      const finish = () => {
        st.inFlight -= 1;
        if (log) log(`${new Date().toISOString()} ${req.method} ${req.url} ${res.statusCode} ${size}B`);
      };
      res.on('finish', finish);
      res.on('close', () => { if (!res.writableFinished) finish(); });
      if (tooBig) {
        st.stats.requests += 1;
        st.stats.invalid += 1;
        note(st.stats.invalid_samples, { route: null, method: req.method, path: req.url, error: `body of ${size} bytes over the ${maxBody}-byte limit` });
        return err(res, 413, `Payload error: request body of ${size} bytes is over the limit of ${maxBody} bytes`);
      }
      handle(req, res, Buffer.concat(chunks).toString('utf8'), size).catch((e) => {
        try { err(res, 500, `Service internal error: stand-in bug: ${e.stack}`); } catch { /* response already sent */ }
      });
    });
  });
  server.keepAliveTimeout = 30000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  let grpcSide = null;
  if (opts.grpcPort !== undefined) { // issue 18: the gRPC services on a second port, same model
    const { startGrpc } = await import('./grpc.mjs');
    grpcSide = await startGrpc({
      st, spec, ops, note, HttpError, takeFault, stringify, log,
      opts: { ...opts, oracle: opts.oracle ?? DEFAULT_ORACLE, protoDir: opts.protoDir ?? DEFAULT_PROTO },
    });
  }
  const close = async () => {
    if (grpcSide) await grpcSide.close();
    await new Promise((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  };
  return { server, port, grpcPort: grpcSide ? grpcSide.port : null, state: st, spec, close, uptime: () => Number(process.hrtime.bigint() - started) / 1e9 };
}

// ---------------------------------------------------------------- command line
function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => { if (i + 1 >= argv.length) throw new Error(`${a} needs a value`); return argv[++i]; };
    switch (a) {
      case '--port': o.port = Number(val()); break;
      case '--port-file': o.portFile = val(); break;
      case '--openapi': o.openapi = val(); break;
      case '--oracle': o.oracle = val(); break;
      case '--api-key': o.apiKey = val(); break;
      case '--log': o.log = val(); break;
      case '--optimize-ms': o.optimizeMs = Number(val()); break;
      case '--max-body-mb': o.maxBodyMb = Number(val()); break;
      case '--default-indexing-threshold': o.defaultIndexingThreshold = Number(val()); break;
      case '--lax': o.lax = true; break;
      case '--grpc-port': o.grpcPort = Number(val()); break;
      case '--grpc-port-file': o.grpcPortFile = val(); break;
      case '--proto': o.protoDir = val(); break;
      case '--grpc-max-mb': o.grpcMaxMb = Number(val()); break;
      case '--tls-cert': o.tlsCert = val(); break;
      case '--tls-key': o.tlsKey = val(); break;
      default: throw new Error(`unknown argument ${a}`);
    }
  }
  return o;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  let o;
  try { o = parseArgs(process.argv.slice(2)); } catch (e) { console.error(`qdrant-standin: ${e.message}`); process.exit(2); }
  const s = await startStandin(o);
  if (o.grpcPortFile && s.grpcPort !== null) { writeFileSync(o.grpcPortFile + '.tmp', String(s.grpcPort) + '\n'); renameSync(o.grpcPortFile + '.tmp', o.grpcPortFile); }
  if (o.portFile) { writeFileSync(o.portFile + '.tmp', String(s.port) + '\n'); renameSync(o.portFile + '.tmp', o.portFile); }
  console.log(`qdrant-standin listening on ${o.tlsCert ? 'https' : 'http'}://127.0.0.1:${s.port}${s.grpcPort !== null ? ` and gRPC on 127.0.0.1:${s.grpcPort}` : ''}`);
  const stop = async () => { await s.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
