// Writes a small multi-file corpus for the Qdrant end-to-end test with DuckDB (an independent
// parquet writer): FILES files of ROWS rows each, columns
//   id BIGINT, dense FLOAT[16], sparse STRUCT(indices UINTEGER[], values FLOAT[]) (1..5 unique
//   indices, sometimes empty), colbert FLOAT[][] (1..3 vectors of 8), title VARCHAR (some NULL),
//   n INTEGER, meta JSON (a JSON object string, unpacked into the payload by the loader).
// usage: node gen_corpus.mjs <oracle dir with node_modules> <out dir> [files=3] [rows=400]
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
const [oracle, out, files = '3', rows = '400'] = process.argv.slice(2);
const require = createRequire(path.resolve(oracle, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
mkdirSync(out, { recursive: true });
await con.run('select setseed(0.25)');
for (let f = 0; f < Number(files); f++) {
  const R = Number(rows), base = f * R;
  // NB: "(random() + k)" keeps DuckDB from folding identical volatile expressions into one value
  await con.run(`copy (select (${base} + i)::BIGINT id,
      list_transform(range(16), x -> (random() * 2 - 1)::FLOAT)::FLOAT[16] dense,
      {'indices': list_transform(range((i % 6)::BIGINT), x -> (x * 97 + i % 89)::UINTEGER),
       'values': list_transform(range((i % 6)::BIGINT), x -> ((random() + 0) * 4)::FLOAT)} sparse,
      list_transform(range(1 + (i % 3)::BIGINT), v -> list_transform(range(8), x -> ((random() + 1) - 1.5)::FLOAT))::FLOAT[][] colbert,
      case when i % 7 = 3 then NULL else 'title ' || (${base} + i) || ' ' || repeat('é"\\', (i % 3)::INT) end title,
      (i * 31 % 1000)::INTEGER n,
      json_object('file', ${f}, 'row', i, 'tags', ['a', 'b' || (i % 5)], 'w', (i % 10) / 4.0)::JSON meta
    from range(${R}) r(i)) to '${out}/part-${String(f).padStart(3, '0')}.parquet' (format parquet, row_group_size 150)`);
}
console.log(`wrote ${files} files x ${rows} rows to ${out}`);
