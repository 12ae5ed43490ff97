#!/usr/bin/env node
// Generates src/store/qdrant_pb_schema.{h,c}: the message and enum tables of Qdrant's gRPC API
// that vforge's table-driven protobuf codec (src/store/qdrant_pb.c) encodes and decodes with.
//
// Why a table and not protoc-c output: Debian 12's protobuf-c 1.4.1 refuses proto3 `optional`
// (which Qdrant's protos use over 400 times), and a message tree per point would be too slow for
// the upload path anyway (docs/DESIGN.md, "Qdrant over gRPC").  The table is generated from the
// official protos (../shared/qdrant/proto, Apache-2.0) by protobufjs, the parser the stand-in's
// @grpc/proto-loader uses, so both ends read the same definitions.  Only the messages reachable
// from the RPCs vforge calls are emitted.
//
// usage: node scripts/gen-qdrant-pb.mjs [PROTO_DIR] [OUT_DIR]
//   PROTO_DIR default ../shared/qdrant/proto, OUT_DIR default src/store (the committed files);
//   tests/store/test_qdrant_pb_schema.sh regenerates into a temporary directory and diffs.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const protoDir = path.resolve(process.argv[2] || path.join(repo, '../shared/qdrant/proto'));
const outDir = path.resolve(process.argv[3] || path.join(repo, 'src/store'));
const require = createRequire(path.join(repo, 'tests/oracle/package.json'));
const pb = require('protobufjs');

// the RPCs vforge calls: [service, method]
const RPCS = [
  ['Collections', 'Get'], ['Collections', 'List'], ['Collections', 'Create'], ['Collections', 'Update'],
  ['Collections', 'Delete'], ['Collections', 'CollectionExists'],
  ['Points', 'Upsert'], ['Points', 'UpdateBatch'], ['Points', 'Count'], ['Points', 'Query'],
  ['Points', 'QueryBatch'], ['Points', 'CreateFieldIndex'], ['Points', 'Scroll'],
];

const root = new pb.Root();
root.resolvePath = (origin, target) => (target.startsWith('google/') ? target : path.join(protoDir, target));
root.loadSync(['collections_service.proto', 'points_service.proto'], { keepCase: true });
root.resolveAll();

const SCALAR = {
  double: 1, float: 2, int64: 3, uint64: 4, int32: 5, fixed64: 6, fixed32: 7, bool: 8, string: 9,
  bytes: 12, uint32: 13, sfixed32: 15, sfixed64: 16, sint32: 17, sint64: 18,
};
const MESSAGE = 11, ENUM = 14;

const msgs = [], enums = [], msgIndex = new Map(), enumIndex = new Map();
const cname = (full) => full.replace(/^\./, '').replace(/\./g, '_');
function addEnum(e) {
  if (enumIndex.has(e.fullName)) return;
  enumIndex.set(e.fullName, enums.length);
  enums.push(e);
}
function addMsg(t) {
  if (msgIndex.has(t.fullName)) return;
  msgIndex.set(t.fullName, msgs.length);
  msgs.push(t);
  for (const f of t.fieldsArray) {
    f.resolve();
    if (f.resolvedType instanceof pb.Type) addMsg(f.resolvedType);
    else if (f.resolvedType instanceof pb.Enum) addEnum(f.resolvedType);
  }
}
const rpcs = [];
for (const [svc, m] of RPCS) {
  const s = root.lookupService(`qdrant.${svc}`);
  const meth = s.methods[m];
  if (!meth) throw new Error(`no rpc ${svc}/${m} in the protos`);
  meth.resolve();
  addMsg(meth.resolvedRequestType);
  addMsg(meth.resolvedResponseType);
  rpcs.push({ svc, m, path: `/qdrant.${svc}/${m}`, req: meth.resolvedRequestType.fullName, resp: meth.resolvedResponseType.fullName });
}

const esc = (s) => JSON.stringify(s);
const lines = [], fieldLines = [], oneofLines = [], valLines = [];
let nfields = 0, noneofs = 0, nvals = 0;
const msgRows = [];
for (const t of msgs) {
  const fields = [...t.fieldsArray].sort((a, b) => a.id - b.id);
  const realOneofs = t.oneofsArray.filter((o) => !(o.fieldsArray.length === 1 && o.fieldsArray[0].options && o.fieldsArray[0].options.proto3_optional));
  const f0 = nfields, o0 = noneofs;
  for (const o of realOneofs) { oneofLines.push(`    ${esc(o.name)},`); noneofs++; }
  for (const f of fields) {
    let type, ref = -1, label = 0, mapKey = 0, mapVal = 0, mapRef = -1, oneof = -1;
    const opt = f.options && f.options.proto3_optional;
    const typeOf = (name, rt) => {
      if (SCALAR[name]) return [SCALAR[name], -1];
      if (rt instanceof pb.Type) return [MESSAGE, msgIndex.get(rt.fullName)];
      if (rt instanceof pb.Enum) return [ENUM, enumIndex.get(rt.fullName)];
      throw new Error(`${t.fullName}.${f.name}: unknown type ${name}`);
    };
    if (f.map) {
      label = 3;
      type = MESSAGE;
      mapKey = SCALAR[f.keyType];
      [mapVal, mapRef] = typeOf(f.type, f.resolvedType);
    } else {
      [type, ref] = typeOf(f.type, f.resolvedType);
      if (f.repeated) label = 2;
      else if (opt) label = 1;
      if (f.partOf && !opt) oneof = realOneofs.indexOf(f.partOf);
    }
    const packed = f.repeated && !f.map && SCALAR[f.type] && f.type !== 'string' && f.type !== 'bytes' ? 1 : 0;
    fieldLines.push(`    {${esc(f.name)}, ${f.id}, ${type}, ${label}, ${packed}, ${oneof}, ${ref}, ${mapKey}, ${mapVal}, ${mapRef}},`);
    nfields++;
  }
  msgRows.push(`    {${esc(t.fullName.slice(1))}, QPB_FIELDS + ${f0}, ${fields.length}, ${realOneofs.length ? `QPB_ONEOFS + ${o0}` : 'NULL'}, ${realOneofs.length}},`);
}
const enumRows = [];
for (const e of enums) {
  const v0 = nvals;
  const entries = Object.entries(e.values);
  for (const [n, v] of entries) { valLines.push(`    {${esc(n)}, ${v}},`); nvals++; }
  enumRows.push(`    {${esc(e.fullName.slice(1))}, QPB_ENUM_VALUES + ${v0}, ${entries.length}},`);
}

const head = `/* GENERATED by scripts/gen-qdrant-pb.mjs from Qdrant's gRPC protos (../shared/qdrant/proto:
 * collections.proto, points.proto, qdrant_common.proto, json_with_int.proto and their services).
 * Those protos are Copyright Qdrant Solutions GmbH and licensed under the Apache License 2.0
 * (Apache License, Version 2.0; see src/store/QDRANT_PROTO_LICENSE).  This file is a derived table of their
 * message fields and enum values.  Do not edit: regenerate. */
`;
const h = [head,
  '#ifndef VFORGE_QDRANT_PB_SCHEMA_H', '#define VFORGE_QDRANT_PB_SCHEMA_H', '', '#include "store/qdrant_pb.h"', '',
  'enum {',
  ...msgs.map((t, i) => `  QPB_M_${cname(t.fullName)} = ${i},`),
  `  QPB_NMSGS = ${msgs.length}`, '};', '', 'enum {',
  ...enums.map((e, i) => `  QPB_E_${cname(e.fullName)} = ${i},`),
  `  QPB_NENUMS = ${enums.length}`, '};', '', 'enum {',
  ...rpcs.map((r, i) => `  QPB_RPC_${r.svc}_${r.m} = ${i},`),
  `  QPB_NRPCS = ${rpcs.length}`, '};', '',
  'extern const qpb_msg QPB_MSGS[QPB_NMSGS];', 'extern const qpb_enum QPB_ENUMS[QPB_NENUMS];',
  'extern const qpb_rpc QPB_RPCS[QPB_NRPCS];', '', '#endif', ''].join('\n');
const c = [head, '#include <stddef.h>', '', '#include "store/qdrant_pb_schema.h"', '',
  'static const qpb_field QPB_FIELDS[] = {', ...fieldLines, '};', '',
  `static const char *const QPB_ONEOFS[] = {`, ...(oneofLines.length ? oneofLines : ['    NULL,']), '};', '',
  'static const qpb_enum_value QPB_ENUM_VALUES[] = {', ...valLines, '};', '',
  'const qpb_msg QPB_MSGS[QPB_NMSGS] = {', ...msgRows, '};', '',
  'const qpb_enum QPB_ENUMS[QPB_NENUMS] = {', ...enumRows, '};', '',
  'const qpb_rpc QPB_RPCS[QPB_NRPCS] = {',
  ...rpcs.map((r) => `    {${esc(r.path)}, QPB_M_${cname(r.req)}, QPB_M_${cname(r.resp)}},`), '};', ''].join('\n');
writeFileSync(path.join(outDir, 'qdrant_pb_schema.h'), h);
writeFileSync(path.join(outDir, 'qdrant_pb_schema.c'), c);
console.log(`gen-qdrant-pb: ${msgs.length} messages, ${nfields} fields, ${enums.length} enums, ${rpcs.length} rpcs -> ${outDir}`);
