// Writes the small bundled example corpus (examples/corpus/) with DuckDB: 2 files x 3000 rows,
// id BIGINT, emb FLOAT[32], text VARCHAR, meta JSON.  Run once; the output is committed.
import { DuckDBInstance } from '@duckdb/node-api';
const out = process.argv[2] || 'examples/corpus';
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
await con.run(`select setseed(0.5)`);
for (const part of [0, 1]) {
  await con.run(`create or replace table t as
    select (i + ${part * 3000})::BIGINT as id,
           list_transform(range(32), x -> (random() * 2 - 1)::FLOAT)::FLOAT[32] as emb,
           'document ' || (i + ${part * 3000}) as text,
           json_object('lang', ['en','de','fr'][1 + (i % 3)::INT], 'score', (i % 100) / 100.0)::JSON as meta
    from range(3000) r(i)`);
  await con.run(`copy t to '${out}/rank00/batch_${String(part).padStart(8, '0')}.parquet'
                 (format parquet, compression zstd, row_group_size 1024)`);
}
console.log('wrote', out);
