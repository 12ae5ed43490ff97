// Writes tests/data/records_vectors.parquet (run once; the output is committed): sparse
// (struct{indices, values}) and multivector (list<list<float>>) columns with good and bad rows
// for tests/corpus/test_records.c.  The project's writer has no struct or nested-list columns.
import { DuckDBInstance } from '@duckdb/node-api';
const out = process.argv[2] || '../data';
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
// rows (0-based), two row groups of 4:
//  sp   (UINTEGER indices): 0 ok, 1 empty (ok), 2 null, 3 lengths differ, 4 NaN value, 5..7 ok
//  sp64 (BIGINT indices):   0 ok (0 and 2^32-1), 1 index -1, 2 index 2^32, 3..7 ok
//  mv   (FLOAT[][]):        0,1 ok (dim 2), 2 dim 3, 3 no vectors, 4 null element, 5 null,
//                           6 null inner vector, 7 +inf
await con.run(`copy (select i::BIGINT id,
  case i when 0 then {'indices': [1,5,9]::UINTEGER[], 'values': [0.5,1.5,2.5]::FLOAT[]}
         when 1 then {'indices': []::UINTEGER[], 'values': []::FLOAT[]}
         when 2 then NULL
         when 3 then {'indices': [1,2]::UINTEGER[], 'values': [1.0]::FLOAT[]}
         when 4 then {'indices': [3]::UINTEGER[], 'values': ['nan'::FLOAT]}
         else {'indices': [i, i+10]::UINTEGER[], 'values': [i, i+0.25]::FLOAT[]} end sp,
  case i when 0 then {'indices': [0,4294967295]::BIGINT[], 'values': [1,2]::DOUBLE[]}
         when 1 then {'indices': [-1]::BIGINT[], 'values': [1]::DOUBLE[]}
         when 2 then {'indices': [4294967296]::BIGINT[], 'values': [1]::DOUBLE[]}
         else {'indices': [i]::BIGINT[], 'values': [i * 0.5]::DOUBLE[]} end sp64,
  case i when 0 then [[1,2],[3,4]]::FLOAT[][]
         when 1 then [[5,6]]::FLOAT[][]
         when 2 then [[1,2,3]]::FLOAT[][]
         when 3 then []::FLOAT[][]
         when 4 then [[1,NULL]]::FLOAT[][]
         when 5 then NULL
         when 6 then [[1,2],NULL]::FLOAT[][]
         else [[9,'inf'::FLOAT]]::FLOAT[][] end mv
  from range(8) r(i)) to '${out}/records_vectors.parquet' (format parquet, row_group_size 4)`);
console.log('wrote', out);
