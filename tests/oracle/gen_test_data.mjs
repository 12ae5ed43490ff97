// Writes the tiny committed fixtures in tests/data/ (run once; the outputs are committed).
import { DuckDBInstance } from '@duckdb/node-api';
const out = process.argv[2] || '../data';
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
// row 3 (0-based, in the second row group) has dimension 3 instead of 4
await con.run(`copy (select i::BIGINT id, case when i = 3 then [1,2,3]::FLOAT[] else [i, i+1, i+2, i+3]::FLOAT[] end emb
               from range(6) r(i)) to '${out}/dim_mismatch.parquet' (format parquet, row_group_size 2)`);
// row 4 has a NULL element inside its vector
await con.run(`copy (select i::BIGINT id, case when i = 4 then [1, NULL, 3, 4]::FLOAT[] else [i, i+1, i+2, i+3]::FLOAT[] end emb
               from range(6) r(i)) to '${out}/null_element.parquet' (format parquet)`);
console.log('wrote', out);
