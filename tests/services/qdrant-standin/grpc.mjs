// The Qdrant stand-in's gRPC side (issue 18): Qdrant's Collections and Points services served by
// @grpc/grpc-js from the official protos (../shared/qdrant/proto, loaded by @grpc/proto-loader),
// over the SAME collection and point model as the REST side of server.mjs, so a test can load
// over gRPC and check over REST.
//
// Every request is checked twice:
//   1. on the wire, against the protos (protobufjs reflection): an unknown field number, a wire
//      type that does not match the field's type, bytes that do not parse, or a string that is
//      not UTF-8 is refused (INVALID_ARGUMENT, counted as `invalid`) — a real Qdrant would drop
//      unknown fields silently;
//   2. converted to the equivalent REST body (field names are shared; enums by their REST
//      spelling; vectors_config.params_map.map -> vectors; Value -> JSON) and validated against
//      the OpenAPI schema of the REST route with the same validator as REST (so a wrong shape,
//      e.g. an unknown datatype or a Vector without a member, is refused the same way), then
//      handed to the same operation.
// Answers are converted back (REST JSON -> proto objects) and serialised by proto-loader.
// Faults come from the shared switches (POST /__standin/faults): HTTP-style codes map to gRPC
// statuses (429 -> RESOURCE_EXHAUSTED with a retry-after, 503 -> UNAVAILABLE, 504 ->
// DEADLINE_EXCEEDED, 500 -> INTERNAL; `grpc_status` names gRPC codes directly), `delay_ms`,
// `apply` (the write happens, the client sees the error) and `reset_next` (the TCP front resets
// that many client connections on their next bytes: a connection reset).
// Metadata `api-key` is checked like the REST header (UNAUTHENTICATED / PERMISSION_DENIED).
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';

const SERVICES = {
  'qdrant.Collections': {
    Get: { op: 'get_collection' },
    List: { op: 'get_collections' },
    Create: { op: 'create_collection' },
    Update: { op: 'update_collection' },
    Delete: { op: 'delete_collection' },
    CollectionExists: { op: 'collection_exists' },
  },
  'qdrant.Points': {
    Upsert: { op: 'upsert_points' },
    Count: { op: 'count_points' },
    Query: { op: 'query_points' },
    QueryBatch: { op: 'query_batch_points' },
    CreateFieldIndex: { op: 'create_field_index' },
    Scroll: { op: 'scroll_points' },
  },
};

// REST spelling of enum names: Distance as is ("Cosine"), others snake_case ("MaxSim" -> "max_sim")
const snake = (s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
const norm = (s) => String(s).replace(/[_-]/g, '').toLowerCase();
function restEnum(e, name) {
  if (e.fullName === '.qdrant.Distance') return name;
  if (e.fullName === '.qdrant.FieldType') return snake(name.replace(/^FieldType/, ''));
  return snake(name);
}
function protoEnum(e, text) {
  for (const name of Object.keys(e.values)) if (norm(name) === norm(text)) return name;
  const short = e.name;
  for (const name of Object.keys(e.values)) if (name.startsWith(short) && norm(name.slice(short.length)) === norm(text)) return name;
  return undefined;
}

export async function startGrpc(ctx) {
  const { st, spec, ops, opts, note, HttpError, takeFault, stringify } = ctx;
  const req = createRequire(path.resolve(opts.oracle, 'package.json'));
  const grpc = req('@grpc/grpc-js');
  const loader = req('@grpc/proto-loader');
  const pb = req('protobufjs');
  const protoDir = opts.protoDir;
  const files = ['collections_service.proto', 'points_service.proto'];
  const def = loader.loadSync(files, { includeDirs: [protoDir], keepCase: true, longs: String, enums: String, defaults: false, oneofs: false });
  const root = new pb.Root();
  root.resolvePath = (o, t) => (t.startsWith('google/') ? t : path.join(protoDir, t));
  root.loadSync(files, { keepCase: true });
  root.resolveAll();
  const T = (n) => root.lookupTypeOrEnum(n);

  // ---------------------------------------------------------------- wire check (step 1)
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const WT = { double: 1, fixed64: 1, sfixed64: 1, float: 5, fixed32: 5, sfixed32: 5, string: 2, bytes: 2 };
  const wireOf = (f) => {
    if (f.map) return 2;
    if (WT[f.type] !== undefined) return WT[f.type];
    if (f.resolvedType instanceof pb.Type) return 2;
    return 0; // varints: ints, bool, enums
  };
  // -> [value (a Number; exact below 2^53, which tags and lengths are), next pos] or null
  function readVarint(buf, pos) {
    let r = 0, mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= buf.length) return null;
      const b = buf[pos++];
      r += (b & 0x7f) * mul;
      if (!(b & 0x80)) return [r, pos];
      mul *= 128;
    }
    return null;
  }
  const entryTypes = new Map(); // map field -> its entry type (key = 1, value = 2)
  const entryOf = (f) => {
    let e = entryTypes.get(f);
    if (!e) {
      e = new pb.Type(`${f.name}Entry`).add(new pb.Field('key', 1, f.keyType)).add(new pb.Field('value', 2, f.type));
      e.fieldsById[2].resolvedType = f.resolvedType;
      entryTypes.set(f, e);
    }
    return e;
  };
  // -> error text or null
  function checkWire(type, buf, where, depth = 0) {
    if (depth > 64) return `${where}: nested too deeply`;
    let pos = 0;
    while (pos < buf.length) {
      const t = readVarint(buf, pos);
      if (!t) return `${where}: truncated tag at byte ${pos}`;
      pos = t[1];
      const num = Math.floor(t[0] / 8), wt = t[0] % 8;
      const f = type.fieldsById[num];
      if (!f) return `${where}: unknown field number ${num} in ${type.fullName.slice(1)}`;
      const want = wireOf(f);
      const packedOk = f.repeated && !f.map && want !== 2 && wt === 2;
      if (wt !== want && !packedOk) return `${where}.${f.name}: wire type ${wt}, expected ${want} (${f.type})`;
      let body = null;
      if (wt === 0) { const v = readVarint(buf, pos); if (!v) return `${where}.${f.name}: truncated varint`; pos = v[1]; }
      else if (wt === 1) { if (pos + 8 > buf.length) return `${where}.${f.name}: truncated`; pos += 8; }
      else if (wt === 5) { if (pos + 4 > buf.length) return `${where}.${f.name}: truncated`; pos += 4; }
      else if (wt === 2) {
        const l = readVarint(buf, pos);
        if (!l) return `${where}.${f.name}: truncated length`;
        const n = Number(l[0]);
        pos = l[1];
        if (pos + n > buf.length) return `${where}.${f.name}: length ${n} runs past the message`;
        body = buf.subarray(pos, pos + n);
        pos += n;
      } else return `${where}.${f.name}: wire type ${wt} is not used by proto3`;
      if (body === null) continue;
      if (f.map) {
        const e = checkWire(entryOf(f), body, `${where}.${f.name}`, depth + 1);
        if (e) return e;
        if (f.keyType === 'string' && !validUtf8Key(body)) return `${where}.${f.name}: a map key is not UTF-8`;
      } else if (f.resolvedType instanceof pb.Type && !packedOk) {
        const e = checkWire(f.resolvedType, body, `${where}.${f.name}`, depth + 1);
        if (e) return e;
      } else if (f.type === 'string') {
        try { utf8.decode(body); } catch { return `${where}.${f.name}: not valid UTF-8`; }
      }
    }
    return null;
  }
  function validUtf8Key(entryBody) {
    try { const k = pb.Reader.create(entryBody); while (k.pos < k.len) { const tag = k.uint32(); if ((tag >>> 3) === 1) { utf8.decode(k.bytes()); } else k.skipType(tag & 7); } return true; } catch { return false; }
  }

  // ---------------------------------------------------------------- proto -> REST (step 2)
  const toNum = (s) => { const b = BigInt(s); return b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b; };
  function jsonOfValue(v) {
    if (!v || typeof v !== 'object') return null;
    if ('null_value' in v) return null;
    if ('double_value' in v) return v.double_value;
    if ('integer_value' in v) return toNum(v.integer_value);
    if ('string_value' in v) return v.string_value;
    if ('bool_value' in v) return v.bool_value;
    if ('struct_value' in v) return jsonOfStruct(v.struct_value);
    if ('list_value' in v) return (v.list_value.values || []).map(jsonOfValue);
    throw new HttpError(400, 'Wrong input: a Value with no kind set', 'invalid');
  }
  const jsonOfStruct = (s) => Object.fromEntries(Object.entries((s && s.fields) || {}).map(([k, v]) => [k, jsonOfValue(v)]));
  function restVector(v, where) {
    if (v.dense) return (v.dense.data || []).slice();
    if (v.sparse) return { indices: (v.sparse.indices || []).slice(), values: (v.sparse.values || []).slice() };
    if (v.multi_dense) return (v.multi_dense.vectors || []).map((d) => (d.data || []).slice());
    if (v.data) { // the deprecated flat form
      if (v.indices) return { indices: v.indices.data.slice(), values: v.data.slice() };
      if (v.vectors_count) { const n = v.vectors_count, d = v.data.length / n, out = []; for (let i = 0; i < n; i++) out.push(v.data.slice(i * d, (i + 1) * d)); return out; }
      return v.data.slice();
    }
    for (const k of ['document', 'image', 'object'])
      if (v[k]) throw new HttpError(501, `Service internal error: the stand-in does not model inference (${where}.${k})`, 'unmodelled');
    throw new HttpError(400, `Wrong input: ${where}: a Vector with no member set`, 'invalid');
  }
  // proto Filter -> REST Filter (openapi.json `Filter`): a condition's oneof member becomes the
  // REST keys of that kind; Match members become {value | text | any | except | ...}
  const tsString = (t) => new Date(Number(t.seconds || 0) * 1000 + Math.floor((t.nanos || 0) / 1e6)).toISOString();
  function restMatch(m, where) {
    if (m.keyword !== undefined) return { value: m.keyword };
    if (m.integer !== undefined) return { value: toNum(m.integer) };
    if (m.boolean !== undefined) return { value: m.boolean };
    for (const k of ['text', 'text_any', 'phrase', 'prefix']) if (m[k] !== undefined) return { [k]: m[k] };
    if (m.keywords) return { any: m.keywords.strings || [] };
    if (m.integers) return { any: (m.integers.integers || []).map(toNum) };
    if (m.except_keywords) return { except: m.except_keywords.strings || [] };
    if (m.except_integers) return { except: (m.except_integers.integers || []).map(toNum) };
    throw new HttpError(400, `Wrong input: ${where}: a Match with no member set`, 'invalid');
  }
  function restCondition(c, where) {
    if (c.field) {
      const f = c.field, out = { key: f.key };
      if (f.match) out.match = restMatch(f.match, `${where}.field.match`);
      if (f.range) out.range = { ...f.range };
      if (f.datetime_range) out.range = Object.fromEntries(Object.entries(f.datetime_range).map(([k, t]) => [k, tsString(t)]));
      for (const k of ['geo_bounding_box', 'geo_radius', 'geo_polygon', 'values_count'])
        if (f[k]) out[k] = restOf(T(`qdrant.${k === 'values_count' ? 'ValuesCount' : k === 'geo_radius' ? 'GeoRadius' : k === 'geo_polygon' ? 'GeoPolygon' : 'GeoBoundingBox'}`), f[k], `${where}.${k}`);
      for (const k of ['is_empty', 'is_null']) if (f[k] !== undefined) out[k] = f[k];
      return out;
    }
    if (c.is_empty) return { is_empty: { key: c.is_empty.key } };
    if (c.is_null) return { is_null: { key: c.is_null.key } };
    if (c.has_id) return { has_id: (c.has_id.has_id || []).map((id, i) => restOf(T('qdrant.PointId'), id, `${where}.has_id[${i}]`)) };
    if (c.has_vector) return { has_vector: c.has_vector.has_vector };
    if (c.nested) return { nested: { key: c.nested.key, filter: restFilter(c.nested.filter || {}, `${where}.nested.filter`) } };
    if (c.filter) return restFilter(c.filter, `${where}.filter`);
    if (c.slice) throw new HttpError(501, `Service internal error: the stand-in does not model slice conditions (${where})`, 'unmodelled');
    throw new HttpError(400, `Wrong input: ${where}: a Condition with no member set`, 'invalid');
  }
  function restFilter(f, where) {
    const out = {};
    for (const k of ['must', 'should', 'must_not'])
      if (f[k]) out[k] = f[k].map((c, i) => restCondition(c, `${where}.${k}[${i}]`));
    if (f.min_should) out.min_should = { conditions: (f.min_should.conditions || []).map((c, i) => restCondition(c, `${where}.min_should[${i}]`)), min_count: toNum(f.min_should.min_count || '0') };
    return out;
  }
  function restOf(type, obj, where) {
    switch (type.fullName) {
      case '.qdrant.Value': return jsonOfValue(obj);
      case '.qdrant.Struct': return jsonOfStruct(obj);
      case '.qdrant.PointId':
        if (obj.num !== undefined) return toNum(obj.num);
        if (obj.uuid !== undefined) return obj.uuid;
        throw new HttpError(400, `Wrong input: ${where}: a PointId with neither num nor uuid`, 'invalid');
      case '.qdrant.MaxOptimizationThreads': return obj.value !== undefined ? toNum(obj.value) : obj.setting !== undefined ? 'auto' : null;
      case '.qdrant.QuantizationConfigDiff': if (obj.disabled) return 'Disabled'; break;
      case '.qdrant.WithPayloadSelector':
        if (obj.enable !== undefined) return obj.enable;
        if (obj.include) return { include: obj.include.fields || [] };
        if (obj.exclude) return { exclude: obj.exclude.fields || [] };
        return undefined;
      case '.qdrant.WithVectorsSelector':
        if (obj.enable !== undefined) return obj.enable;
        if (obj.include) return obj.include.names || [];
        return undefined;
      case '.qdrant.VectorsConfig': case '.qdrant.VectorsConfigDiff': {
        if (obj.params) return restOf(type.fields.params.resolvedType, obj.params, `${where}.params`);
        const mt = type.fields.params_map.resolvedType.fields.map;
        return Object.fromEntries(Object.entries((obj.params_map && obj.params_map.map) || {}).map(([k, v]) => [k, restOf(mt.resolvedType, v, `${where}.${k}`)]));
      }
      case '.qdrant.SparseVectorConfig': {
        const mt = type.fields.map;
        return Object.fromEntries(Object.entries(obj.map || {}).map(([k, v]) => [k, restOf(mt.resolvedType, v, `${where}.${k}`)]));
      }
      case '.qdrant.Vectors':
        if (obj.vector) return restVector(obj.vector, `${where}.vector`);
        return Object.fromEntries(Object.entries((obj.vectors && obj.vectors.vectors) || {}).map(([k, v]) => [k, restVector(v, `${where}.${k}`)]));
      case '.qdrant.VectorInput':
        if (obj.id) return restOf(T('qdrant.PointId'), obj.id, `${where}.id`);
        return restVector(obj, where);
      case '.qdrant.Filter': return restFilter(obj, where);
      case '.qdrant.Query':
        if (obj.nearest) return restOf(T('qdrant.VectorInput'), obj.nearest, `${where}.nearest`);
        throw new HttpError(501, `Service internal error: the stand-in models Query.nearest only (${where})`, 'unmodelled');
      default: break;
    }
    const out = {};
    for (const f of type.fieldsArray) {
      const v = obj[f.name];
      if (v === undefined || v === null) continue;
      let key = f.name;
      if (key === 'vectors_config') key = 'vectors';
      else if (key === 'sparse_vectors_config') key = 'sparse_vectors';
      else if (type.fullName === '.qdrant.PointStruct' && key === 'vectors') key = 'vector';
      const conv = (x, w) => {
        if (f.resolvedType instanceof pb.Type) return restOf(f.resolvedType, x, w);
        if (f.resolvedType instanceof pb.Enum) return restEnum(f.resolvedType, x);
        if (['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'].includes(f.type)) return toNum(x);
        return x;
      };
      if (f.map) out[key] = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, conv(x, `${where}.${f.name}.${k}`)]));
      else if (f.repeated) out[key] = v.map((x, i) => conv(x, `${where}.${f.name}[${i}]`));
      else { const c = conv(v, `${where}.${f.name}`); if (c !== undefined) out[key] = c; }
    }
    return out;
  }

  // ---------------------------------------------------------------- REST -> proto (answers)
  function valueOf(v) {
    if (v === null || v === undefined) return { null_value: 'NULL_VALUE' };
    if (typeof v === 'boolean') return { bool_value: v };
    if (typeof v === 'bigint') return { integer_value: v.toString() };
    if (typeof v === 'number') return Number.isInteger(v) ? { integer_value: String(v) } : { double_value: v };
    if (typeof v === 'string') return { string_value: v };
    if (Array.isArray(v)) return { list_value: { values: v.map(valueOf) } };
    return { struct_value: { fields: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, valueOf(x)])) } };
  }
  function protoOf(type, v) {
    switch (type.fullName) {
      case '.qdrant.Value': return valueOf(v);
      case '.qdrant.Struct': return { fields: Object.fromEntries(Object.entries(v || {}).map(([k, x]) => [k, valueOf(x)])) };
      case '.qdrant.PointId': return typeof v === 'string' ? { uuid: v } : { num: String(v) };
      case '.qdrant.MaxOptimizationThreads': return typeof v === 'number' ? { value: v } : v === 'auto' ? { setting: 'Auto' } : undefined;
      case '.qdrant.OptimizerStatus': return v === 'ok' ? { ok: true } : { ok: false, error: (v && v.error) || 'unknown' };
      case '.qdrant.VectorsConfig':
        if (v && typeof v.size === 'number' && typeof v.distance === 'string') return { params: protoOf(T('qdrant.VectorParams'), v) };
        return { params_map: { map: Object.fromEntries(Object.entries(v || {}).map(([k, x]) => [k, protoOf(T('qdrant.VectorParams'), x)])) } };
      case '.qdrant.SparseVectorConfig':
        return { map: Object.fromEntries(Object.entries(v || {}).map(([k, x]) => [k, protoOf(T('qdrant.SparseVectorParams'), x)])) };
      default: break;
    }
    if (v === null || typeof v !== 'object') return undefined;
    const out = {};
    for (const [k0, x] of Object.entries(v)) {
      if (x === null || x === undefined) continue;
      const k = k0 === 'vectors' && type.fields.vectors_config ? 'vectors_config'
        : k0 === 'sparse_vectors' && type.fields.sparse_vectors_config ? 'sparse_vectors_config' : k0;
      const f = type.fields[k];
      if (!f) continue; // REST-only information
      const conv = (y) => {
        if (f.resolvedType instanceof pb.Type) return protoOf(f.resolvedType, y);
        if (f.resolvedType instanceof pb.Enum) return typeof y === 'string' ? protoEnum(f.resolvedType, y) : y;
        if (typeof y === 'bigint') return y.toString();
        return y;
      };
      let c;
      if (f.map) c = Object.fromEntries(Object.entries(x).map(([kk, y]) => [kk, conv(y)]));
      else if (f.repeated) c = Array.isArray(x) ? x.map(conv) : undefined;
      else c = conv(x);
      if (c !== undefined) out[k] = c;
    }
    return out;
  }

  // ---------------------------------------------------------------- RPC -> REST route
  const routeOf = (op) => spec.routes.find((r) => r.op === op);
  function restCall(rpc, msg) {
    const q = new URLSearchParams();
    const params = {};
    let body = null;
    const m = { ...msg };
    if (m.collection_name !== undefined) { params.collection_name = m.collection_name; delete m.collection_name; }
    for (const k of ['timeout', 'wait', 'ordering']) if (m[k] !== undefined) {
      q.set(k, k === 'ordering' ? snake(m[k].type || 'weak') : String(m[k]));
      delete m[k];
    }
    const reqType = T(`qdrant.${rpc.reqName}`);
    switch (rpc.op) {
      case 'get_collection': case 'delete_collection': case 'collection_exists': case 'get_collections': break;
      case 'upsert_points':
        for (const k of ['shard_key_selector', 'update_filter', 'update_mode']) if (m[k] !== undefined) throw new HttpError(501, `Service internal error: the stand-in does not model ${k}`, 'unmodelled');
        body = { points: (m.points || []).map((p, i) => restOf(T('qdrant.PointStruct'), p, `points[${i}]`)) };
        break;
      case 'create_field_index': {
        const t = m.field_type !== undefined ? restEnum(T('qdrant.FieldType'), m.field_type) : 'keyword';
        body = { field_name: m.field_name };
        if (m.field_index_params) {
          const member = Object.keys(m.field_index_params)[0];
          const pt = T('qdrant.PayloadIndexParams').fields[member].resolvedType;
          body.field_schema = { type: member.replace(/_index_params$/, ''), ...restOf(pt, m.field_index_params[member], 'field_index_params') };
        } else body.field_schema = t;
        break;
      }
      case 'query_batch_points':
        if (m.read_consistency !== undefined) q.set('consistency', snake(m.read_consistency.type || 'all'));
        body = { searches: (m.query_points || []).map((x, i) => { const r = restOf(T('qdrant.QueryPoints'), x, `query_points[${i}]`); delete r.collection_name; delete r.read_consistency; delete r.timeout; return r; }) };
        break;
      case 'query_points': {
        const r = restOf(reqType, m, '');
        delete r.read_consistency;
        body = r;
        break;
      }
      default: body = restOf(reqType, m, ''); break;
    }
    return { params, body, q };
  }
  function answerOf(rpc, result, t0) {
    const time = Number(process.hrtime.bigint() - t0) / 1e9;
    const R = T(`qdrant.${rpc.respName}`);
    switch (rpc.op) {
      case 'query_batch_points':
        return { result: result.map((r) => ({ result: r.points.map((p) => protoOf(T('qdrant.ScoredPoint'), p)) })), time };
      case 'query_points':
        return { result: result.points.map((p) => protoOf(T('qdrant.ScoredPoint'), p)), time };
      case 'scroll_points':
        return { result: result.points.map((p) => protoOf(T('qdrant.RetrievedPoint'), p)), next_page_offset: result.next_page_offset === null ? undefined : protoOf(T('qdrant.PointId'), result.next_page_offset), time };
      case 'get_collections':
        return { collections: result.collections, time };
      default: return { ...protoOf(R, { result }), time };
    }
  }

  const apiKey = opts.apiKey || null;
  const GRPC_OF_HTTP = { 429: grpc.status.RESOURCE_EXHAUSTED, 500: grpc.status.INTERNAL, 502: grpc.status.UNAVAILABLE, 503: grpc.status.UNAVAILABLE, 504: grpc.status.DEADLINE_EXCEEDED };
  const GRPC_OF_REST = { 400: grpc.status.INVALID_ARGUMENT, 401: grpc.status.UNAUTHENTICATED, 403: grpc.status.PERMISSION_DENIED, 404: grpc.status.NOT_FOUND, 409: grpc.status.ALREADY_EXISTS, 413: grpc.status.RESOURCE_EXHAUSTED, 422: grpc.status.INVALID_ARGUMENT, 501: grpc.status.UNIMPLEMENTED };
  const fail = (cb, code, details, md) => {
    const meta = new grpc.Metadata();
    for (const [k, v] of Object.entries(md || {})) meta.set(k, String(v));
    st.stats.by_grpc_status[code] = (st.stats.by_grpc_status[code] || 0) + 1;
    cb({ code, details, metadata: meta });
  };

  const handler = (svc, name, rpc) => async (call, cb0) => {
    const t0 = process.hrtime.bigint();
    const prof = {};
    const cb = (e, v) => {
      if (ctx.log) ctx.log(`${new Date().toISOString()} gRPC ${svc}/${name} ${e ? `status ${e.code}` : 'OK'} ${call.request.length}B ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)}ms ${JSON.stringify(prof)}`);
      cb0(e, v);
    };
    const S = st.stats;
    S.requests += 1;
    S.grpc_requests += 1;
    const raw = call.request;
    S.max_body_bytes = Math.max(S.max_body_bytes, raw.length);
    S.max_grpc_message_bytes = Math.max(S.max_grpc_message_bytes, raw.length);
    S.by_route[rpc.op] = (S.by_route[rpc.op] || 0) + 1;
    S.by_rpc[`${svc}/${name}`] = (S.by_rpc[`${svc}/${name}`] || 0) + 1;
    const reject = (kind, code, msg) => {
      if (kind === 'invalid') { S.invalid += 1; note(S.invalid_samples, { rpc: `${svc}/${name}`, error: msg }); }
      else if (kind === 'unmodelled') S.unmodelled += 1;
      else if (kind === 'not_found') S.not_found += 1;
      else { S.rejected += 1; note(S.rejected_samples, { rpc: `${svc}/${name}`, error: msg }); }
      return fail(cb, code, msg);
    };
    if (apiKey !== null) {
      const given = call.metadata.get('api-key')[0] || null;
      if (given !== apiKey) {
        S.auth_failures += 1;
        return fail(cb, given ? grpc.status.PERMISSION_DENIED : grpc.status.UNAUTHENTICATED, given ? 'Invalid API key or JWT' : 'Must provide an API key or an Authorization bearer token');
      }
      S.api_key_seen += 1;
    }
    const reqType = T(`qdrant.${rpc.reqName}`);
    const tw = process.hrtime.bigint();
    const werr = checkWire(reqType, raw, rpc.reqName);
    prof.wire = Number(process.hrtime.bigint() - tw) / 1e6;
    if (werr) return reject('invalid', grpc.status.INVALID_ARGUMENT, `stand-in: malformed ${rpc.reqName}: ${werr}`);
    let msg, call2;
    try {
      const td = process.hrtime.bigint();
      msg = reqType.toObject(reqType.decode(raw), { longs: String, enums: String, defaults: false, arrays: false });
      prof.decode = Number(process.hrtime.bigint() - td) / 1e6;
      const tr = process.hrtime.bigint();
      call2 = restCall(rpc, msg);
      prof.rest = Number(process.hrtime.bigint() - tr) / 1e6;
    } catch (e) {
      if (e instanceof HttpError) return reject(e.kind, GRPC_OF_REST[e.code] || grpc.status.INTERNAL, e.message);
      return reject('invalid', grpc.status.INVALID_ARGUMENT, `stand-in: ${rpc.reqName}: ${e.message}`);
    }
    const route = routeOf(rpc.op);
    if (route.bodySchema && call2.body !== null) {
      const tv = process.hrtime.bigint();
      const plain = JSON.parse(stringify(call2.body));
      const v = spec.validator(route.bodySchema);
      const okv = v(plain);
      prof.validate = Number(process.hrtime.bigint() - tv) / 1e6;
      if (!okv) return reject('invalid', grpc.status.INVALID_ARGUMENT, `Format error in the equivalent JSON body (${route.op}): ${spec.errorsText(v.errors).slice(0, 2000)}`);
    }
    if (['upsert_points', 'delete_points'].includes(rpc.op)) {
      const h = createHash('sha1').update(`grpc ${svc}/${name}\n`).update(raw).digest('hex');
      if (st.bodyHashes.has(h)) S.retries_seen += 1; else st.bodyHashes.add(h);
    }
    const { delayMs, fault } = takeFault(rpc.op, true);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    const f = st.faults;
    const faultCode = fault === null ? null : f.grpc_status !== null && f.grpc_status !== undefined ? fault : GRPC_OF_HTTP[fault] ?? grpc.status.INTERNAL;
    const failFault = () => fail(cb, faultCode, f.message || `stand-in fault injection (gRPC status ${faultCode})`,
      faultCode === grpc.status.RESOURCE_EXHAUSTED && f.retry_after !== null ? { 'retry-after': f.retry_after } : {});
    if (faultCode !== null && !f.apply) return failFault();
    let result;
    try {
      result = ops[rpc.op](call2.params, call2.body || {}, call2.q);
    } catch (e) {
      if (!(e instanceof HttpError)) return fail(cb, grpc.status.INTERNAL, `stand-in bug: ${e.stack}`);
      if (faultCode !== null) return failFault();
      return reject(e.kind, GRPC_OF_REST[e.code] || grpc.status.INTERNAL, e.message);
    }
    if (faultCode !== null) return failFault();
    let answer;
    try { answer = answerOf(rpc, result, t0); } catch (e) { return fail(cb, grpc.status.INTERNAL, `stand-in bug (answer): ${e.stack}`); }
    st.stats.by_grpc_status[0] = (st.stats.by_grpc_status[0] || 0) + 1;
    cb(null, answer);
  };

  const server = new grpc.Server({
    'grpc.max_receive_message_length': Math.floor((opts.grpcMaxMb ?? 64) * 1024 * 1024),
    'grpc.max_send_message_length': 256 * 1024 * 1024,
  });
  for (const [svc, methods] of Object.entries(SERVICES)) {
    const d = def[svc];
    const service = {};
    const impl = {};
    for (const [name, rpc] of Object.entries(methods)) {
      const m = d[name];
      rpc.reqName = m.requestType.type.name;
      rpc.respName = m.responseType.type.name;
      service[name] = { ...m, requestDeserialize: (b) => b }; // the raw bytes: checked first
      impl[name] = handler(svc, name, rpc);
    }
    server.addService(service, impl);
  }
  const creds = opts.tlsCert
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: readFileSync(opts.tlsKey), cert_chain: readFileSync(opts.tlsCert) }], false)
    : grpc.ServerCredentials.createInsecure();
  const innerPort = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? reject(e) : resolve(p))));

  // the TCP front: what clients connect to; it resets connections on demand (reset_next)
  const sockets = new Set();
  const front = net.createServer((sock) => {
    st.stats.grpc_connections += 1;
    const up = net.connect(innerPort, '127.0.0.1');
    sock.setNoDelay(true); // no Nagle delay on the relay (HTTP/2 window updates are small)
    up.setNoDelay(true);
    sockets.add(sock);
    sockets.add(up);
    const drop = () => { sock.destroy(); up.destroy(); sockets.delete(sock); sockets.delete(up); };
    sock.on('data', (chunk) => {
      if (st.faults.reset_next > 0) {
        st.faults.reset_next -= 1;
        st.stats.faults_injected += 1;
        st.stats.grpc_resets += 1;
        if (typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy(); else sock.destroy();
        up.destroy();
        return;
      }
      up.write(chunk);
    });
    up.on('data', (chunk) => sock.write(chunk));
    sock.on('error', drop); up.on('error', drop);
    sock.on('close', drop); up.on('close', drop);
  });
  await new Promise((resolve, reject) => { front.once('error', reject); front.listen(opts.grpcPort ?? 0, '127.0.0.1', resolve); });
  const port = front.address().port;
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => front.close(() => r()));
    await new Promise((r) => server.tryShutdown(() => r()));
    server.forceShutdown();
  };
  return { port, close };
}
