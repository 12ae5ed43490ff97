/* Config loader tests (DESIGN.md "Configuration"): every key and default, the split datasource
 * forms, component datasets, variable expansion, every error with its line and key path, and
 * secrets never showing in messages or rendered output. */
#include <dirent.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/config.h"

static vf_error g_err;

static vf_status parse(const char *text, vf_config *cfg) {
  vf_error_clear(&g_err);
  return vf_config_parse(text, strlen(text), "config.yaml", cfg, &g_err);
}

/* parse must fail with VF_ECONFIG and a message holding every needle */
#define CHECK_FAILS(text, ...)                                                                     \
  do {                                                                                             \
    vf_config c_;                                                                                  \
    vf_status s_ = parse(text, &c_);                                                               \
    if (s_ != VF_ECONFIG)                                                                          \
      vf_test_fail(__FILE__, __LINE__, "want ECONFIG, got %s (%s)", vf_status_name(s_),            \
                   g_err.msg);                                                                     \
    const char *needles_[] = {__VA_ARGS__, NULL};                                                  \
    for (int i_ = 0; needles_[i_]; i_++)                                                           \
      if (!strstr(g_err.msg, needles_[i_]))                                                        \
        vf_test_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"", g_err.msg, needles_[i_]);  \
    vf_config_free(&c_);                                                                           \
  } while (0)

static char *render(const vf_config *cfg) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err;
  if (vf_config_render_json(cfg, &b, &err) != VF_OK || vf_buf_append(&b, "", 1, &err) != VF_OK) {
    vf_buf_free(&b);
    return NULL;
  }
  size_t n;
  return (char *)vf_buf_take(&b, &n);
}

#define MIN_DS "datasource: {uri: /data/c}\n"
#define MIN_VEC "vectors: {v: {column: emb}}\n"

VF_TEST(design_example_every_key) {
  const char *text =
      "vectors:\n"
      "  dense: {type: dense, column: dense_embedding, distance: cosine}\n"
      "  sparse: {type: sparse, column: sparse_embedding}\n"
      "  colbert: {type: multivector, column: multivector_embedding, distance: cosine, "
      "comparator: max_sim}\n"
      "datasource:\n"
      "  uri: s3://bucket/fineweb/embedder-bge/cc-main-2025-26/\n"
      "  file_list: [s3://bucket/a.parquet, s3://bucket/b.parquet]\n"
      "  id_expression: \"make_point_id(filename, file_row_number)\"\n"
      "  payload_fields: {abstract: text, metadata: payload, zz: a_col}\n"
      "vectorstore:\n"
      "  type: qdrant\n"
      "  url: http://127.0.0.1:6333\n"
      "  api_key: abc123-literal-key\n"
      "  collection_name: my-collection\n"
      "  params: {hnsw: {m: 16, ef_construct: 100}, quantization: {scalar: {type: int8}},\n"
      "           optimizers: {indexing_threshold: 0}, shard_number: 2, replication_factor: 3,\n"
      "           write_consistency_factor: 1, on_disk_payload: true, recreate: yes}\n"
      "loader: {batch_size: 256, prefetch_size: 4_096, concurrency: 4, retries: 0, wait: false,\n"
      "         skip_bad_rows: true}\n"
      "dispatch: {num_shards: 10, engine: local, run_name: my-run}\n"
      "resources: {cpus: 8, memory: 32, partition: gpu, time: \"04:00:00\"}\n";
  vf_config c;
  CHECK_OK(parse(text, &c));
  CHECK_EQ_INT(c.nvectors, 3);
  CHECK_EQ_STR(c.vectors[0].name, "dense");
  CHECK_EQ_INT(c.vectors[0].kind, CORPUS_VEC_DENSE);
  CHECK_EQ_STR(c.vectors[0].column, "dense_embedding");
  CHECK_EQ_INT(c.vectors[0].distance, CORPUS_COSINE);
  CHECK_EQ_INT(c.vectors[0].line, 2);
  CHECK_EQ_INT(c.vectors[1].kind, CORPUS_VEC_SPARSE);
  CHECK_EQ_INT(c.vectors[1].distance, CORPUS_DOT);
  CHECK_EQ_INT(c.vectors[2].kind, CORPUS_VEC_MULTI);
  CHECK(c.vectors[2].max_sim);
  CHECK(!c.vectors[0].max_sim);
  CHECK(vf_config_find_vector(&c, "colbert") == &c.vectors[2]);
  CHECK(vf_config_find_vector(&c, "nope") == NULL);
  const vf_cfg_datasource *d = &c.datasource;
  CHECK_EQ_INT(d->form, VF_CFG_DS_URI);
  CHECK_EQ_STR(d->uri, "s3://bucket/fineweb/embedder-bge/cc-main-2025-26/");
  CHECK_EQ_INT(d->nfiles, 2);
  CHECK_EQ_STR(d->file_list[1], "s3://bucket/b.parquet");
  CHECK_EQ_STR(d->id_expression, "make_point_id(filename, file_row_number)");
  CHECK_EQ_INT(d->npayload_fields, 3);
  /* config order kept, not sorted */
  CHECK_EQ_STR(d->payload_fields[0].key, "abstract");
  CHECK_EQ_STR(d->payload_fields[0].column, "text");
  CHECK_EQ_STR(d->payload_fields[1].key, "metadata");
  CHECK_EQ_STR(d->payload_fields[2].key, "zz");
  CHECK_EQ_STR(d->payload_fields[2].column, "a_col");
  const vf_cfg_vectorstore *s = &c.vectorstore;
  CHECK_EQ_INT(s->type, VF_CFG_STORE_QDRANT);
  CHECK_EQ_STR(s->url, "http://127.0.0.1:6333");
  CHECK_EQ_STR(s->api_key, "abc123-literal-key");
  CHECK_EQ_STR(s->collection_name, "my-collection");
  CHECK(s->path == NULL);
  CHECK_EQ_INT(s->shard_number, 2);
  CHECK_EQ_INT(s->replication_factor, 3);
  CHECK_EQ_INT(s->write_consistency_factor, 1);
  CHECK_EQ_INT(s->on_disk_payload, 1);
  CHECK(s->recreate);
  CHECK_EQ_STR(s->params_json,
               "{\"hnsw\":{\"m\":16,\"ef_construct\":100},\"quantization\":{\"scalar\":{\"type\":"
               "\"int8\"}},\"optimizers\":{\"indexing_threshold\":0},\"shard_number\":2,"
               "\"replication_factor\":3,\"write_consistency_factor\":1,\"on_disk_payload\":true,"
               "\"recreate\":true}");
  CHECK_EQ_INT(c.loader.batch_size, 256);
  CHECK_EQ_INT(c.loader.prefetch_size, 4096);
  CHECK_EQ_INT(c.loader.concurrency, 4);
  CHECK_EQ_INT(c.loader.retries, 0);
  CHECK(!c.loader.wait);
  CHECK(c.loader.skip_bad_rows);
  CHECK_EQ_INT(c.dispatch.num_shards, 10);
  CHECK_EQ_INT(c.dispatch.engine, VF_CFG_ENGINE_LOCAL);
  CHECK_EQ_STR(c.dispatch.run_name, "my-run");
  CHECK_EQ_INT(c.resources.cpus, 8);
  CHECK_EQ_INT(c.resources.memory_gb, 32);
  CHECK_EQ_STR(c.resources.partition, "gpu");
  CHECK_EQ_STR(c.resources.time, "04:00:00");
  char *json = render(&c);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "\"api_key\":\"****\"") != NULL);
    CHECK(strstr(json, "abc123-literal-key") == NULL);
    CHECK(strstr(json, "\"payload_fields\":{\"abstract\":\"text\",\"metadata\":\"payload\","
                       "\"zz\":\"a_col\"}") != NULL);
    CHECK(strstr(json, "\"colbert\":{\"type\":\"multivector\",\"column\":"
                       "\"multivector_embedding\",\"distance\":\"cosine\",\"comparator\":"
                       "\"max_sim\",\"source\":null}") != NULL);
    CHECK(strstr(json, "\"loader\":{\"batch_size\":256,\"prefetch_size\":4096,\"concurrency\":4,"
                       "\"retries\":0,\"wait\":false,\"skip_bad_rows\":true}") != NULL);
    CHECK(strstr(json, "\"dispatch\":{\"num_shards\":10,\"engine\":\"local\",\"run_name\":"
                       "\"my-run\"}") != NULL);
    CHECK(strstr(json, "\"resources\":{\"cpus\":8,\"memory\":32,\"partition\":\"gpu\",\"time\":"
                       "\"04:00:00\"}") != NULL);
    CHECK(strstr(json, "\"file_list\":[\"s3://bucket/a.parquet\",\"s3://bucket/b.parquet\"]"));
  }
  free(json);
  vf_config_free(&c);
  vf_config_free(&c); /* idempotent */
}

VF_TEST(defaults) {
  vf_config c;
  CHECK_OK(parse(MIN_VEC MIN_DS, &c));
  CHECK_EQ_INT(c.vectors[0].kind, CORPUS_VEC_DENSE);
  CHECK_EQ_INT(c.vectors[0].distance, CORPUS_COSINE);
  CHECK_EQ_INT(c.vectors[0].source, VF_CFG_COMPONENT_NONE);
  CHECK_EQ_STR(c.datasource.id_expression, "vf_point_id(filename, file_row_number)");
  CHECK_EQ_INT(c.datasource.npayload_fields, 0);
  CHECK(c.datasource.file_list == NULL);
  CHECK(c.datasource.id_root == NULL);
  CHECK_EQ_INT(c.vectorstore.type, VF_CFG_STORE_LOCAL);
  CHECK_EQ_STR(c.vectorstore.path, "./vforge-data");
  CHECK(c.vectorstore.url == NULL && c.vectorstore.api_key == NULL);
  CHECK(c.vectorstore.collection_name == NULL);
  CHECK_EQ_STR(c.vectorstore.params_json, "{}");
  CHECK_EQ_INT(c.vectorstore.on_disk_payload, -1);
  CHECK(!c.vectorstore.recreate);
  CHECK_EQ_INT(c.loader.batch_size, 1000);
  CHECK_EQ_INT(c.loader.prefetch_size, 10000);
  CHECK_EQ_INT(c.loader.concurrency, 8);
  CHECK_EQ_INT(c.loader.retries, 5);
  CHECK(!c.loader.wait); /* Qdrant upserts default to wait=false (issue 4) */
  CHECK(!c.loader.skip_bad_rows);
  CHECK_EQ_INT(c.dispatch.num_shards, 0);
  CHECK_EQ_INT(c.dispatch.engine, VF_CFG_ENGINE_SLURM);
  CHECK(c.dispatch.run_name == NULL);
  CHECK_EQ_INT(c.resources.cpus, 0);
  CHECK(c.resources.partition == NULL);
  char *json = render(&c);
  CHECK(json && strstr(json, "\"vectorstore\":{\"type\":\"local\",\"path\":\"./vforge-data\","
                             "\"url\":null,\"api_key\":null,\"collection_name\":null,"
                             "\"params\":{}}"));
  CHECK(json && strstr(json, "\"datasource\":{\"type\":\"uri\",\"uri\":\"/data/c\",\"file_list\":"
                             "null,\"id_expression\":\"vf_point_id(filename, file_row_number)\","
                             "\"payload_fields\":{},\"id_root\":null,\"binary_as_string\":false}"));
  CHECK(json && strstr(json, "\"dispatch\":{\"num_shards\":null,\"engine\":\"slurm\","
                             "\"run_name\":null}"));
  free(json);
  vf_config_free(&c);
  /* explicit nulls and empty values mean "not given" */
  CHECK_OK(parse(MIN_VEC MIN_DS "loader: {batch_size: null, wait: ~}\nvectorstore:\n"
                                "dispatch:\n",
                 &c));
  CHECK_EQ_INT(c.loader.batch_size, 1000);
  CHECK(!c.loader.wait);
  vf_config_free(&c);
  /* a batch larger than the default prefetch raises the prefetch */
  CHECK_OK(parse(MIN_VEC MIN_DS "loader: {batch_size: 20000}\n", &c));
  CHECK_EQ_INT(c.loader.prefetch_size, 20000);
  vf_config_free(&c);
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: 2000, prefetch_size: 100}\n",
              "config.yaml:3:", "loader.prefetch_size", "smaller than loader.batch_size");
  /* file_list alone; payload_fields as a list keeps the column names */
  CHECK_OK(parse(MIN_VEC "datasource:\n  file_list:\n    - /x/a.parquet\n    - /x/b.parquet\n"
                         "  payload_fields: [title, body]\n",
                 &c));
  CHECK(c.datasource.uri == NULL);
  CHECK_EQ_INT(c.datasource.nfiles, 2);
  CHECK_EQ_INT(c.datasource.npayload_fields, 2);
  CHECK_EQ_STR(c.datasource.payload_fields[1].key, "body");
  CHECK_EQ_STR(c.datasource.payload_fields[1].column, "body");
  vf_config_free(&c);
}

VF_TEST(split_forms) {
  vf_config c;
  CHECK_OK(parse(MIN_VEC "datasource: {type: s3, bucket: corpora, prefix: /fineweb/bge/}\n", &c));
  CHECK_EQ_INT(c.datasource.form, VF_CFG_DS_S3);
  CHECK_EQ_STR(c.datasource.uri, "s3://corpora/fineweb/bge/");
  CHECK_EQ_STR(c.datasource.bucket, "corpora");
  CHECK_EQ_STR(c.datasource.prefix, "/fineweb/bge/");
  char *json = render(&c);
  CHECK(json && strstr(json, "\"type\":\"s3\",\"uri\":\"s3://corpora/fineweb/bge/\""));
  CHECK(json && strstr(json, "\"bucket\":\"corpora\",\"prefix\":\"/fineweb/bge/\""));
  free(json);
  vf_config_free(&c);
  CHECK_OK(parse(MIN_VEC "datasource: {type: s3, bucket: corpora}\n", &c));
  CHECK_EQ_STR(c.datasource.uri, "s3://corpora/");
  vf_config_free(&c);
  CHECK_OK(
      parse(MIN_VEC "datasource: {type: huggingface, repo_id: acme/wiki, subdir: data/bge}\n", &c));
  CHECK_EQ_INT(c.datasource.form, VF_CFG_DS_HUGGINGFACE);
  CHECK_EQ_STR(c.datasource.uri, "hf://datasets/acme/wiki/data/bge");
  vf_config_free(&c);
  CHECK_OK(parse(MIN_VEC "datasource: {type: huggingface, repo_id: acme/wiki}\n", &c));
  CHECK_EQ_STR(c.datasource.uri, "hf://datasets/acme/wiki");
  vf_config_free(&c);
  CHECK_OK(parse(
      MIN_VEC "datasource: {type: local, path: /data/corpora/x, id_root: /data/corpora}\n", &c));
  CHECK_EQ_INT(c.datasource.form, VF_CFG_DS_LOCAL);
  CHECK_EQ_STR(c.datasource.uri, "/data/corpora/x");
  CHECK_EQ_STR(c.datasource.id_root, "/data/corpora");
  vf_config_free(&c);
  CHECK_FAILS(MIN_VEC "datasource:\n  type: s3\n  prefix: x\n", "config.yaml:3:", "needs 'bucket'");
  CHECK_FAILS(MIN_VEC "datasource:\n  type: s3\n  bucket: a/b\n",
              "config.yaml:4:", "datasource.bucket");
  CHECK_FAILS(MIN_VEC "datasource:\n  type: s3\n  bucket: b\n  uri: s3://b/x\n",
              "config.yaml:5:", "'datasource.uri' does not apply to type: s3");
  CHECK_FAILS(MIN_VEC "datasource:\n  uri: /x\n  bucket: b\n",
              "config.yaml:4:", "'datasource.bucket' does not apply");
  CHECK_FAILS(MIN_VEC "datasource:\n  type: huggingface\n  repo_id: justname\n",
              "config.yaml:4:", "datasource.repo_id", "namespace/name");
  CHECK_FAILS(MIN_VEC "datasource: {type: local}\n", "config.yaml:2:", "needs 'path'");
  CHECK_FAILS(MIN_VEC "datasource: {type: local, path: 's3://b/x'}\n", "local path");
  CHECK_FAILS(MIN_VEC "datasource: {type: ftp, path: /x}\n", "config.yaml:2:", "datasource.type",
              "'ftp' is not one of: s3, huggingface, local, dataset");
  CHECK_FAILS(MIN_VEC "datasource: {uri: s3://b/x, id_root: /data}\n", "datasource.id_root",
              "local corpora only");
  CHECK_FAILS(MIN_VEC "datasource: {uri: /x, id_root: rel/dir}\n", "absolute");
}

VF_TEST(dataset_components) {
  const char *text =
      "datasource:\n"
      "  type: dataset\n"
      "  vectors: {format: npy, parts: {count: 410, start: 0, path: 'laion/img_emb_{i}.npy', "
      "link: \"https://host/laion/img_emb_{i}.npy\"}}\n"
      "  payload: {parts: {count: 410, path: 'laion/metadata_{i:04d}.parquet'}, exclude: [exif],"
      " fill_null: 0, cache: keep, columns: [url, caption]}\n"
      "  cache: evict\n"
      "  id_expression: row\n"
      "vectors: {image: {type: dense, source: vectors, distance: dot},\n"
      "          txt: {source: payload, column: text_emb}}\n";
  vf_config c;
  CHECK_OK(parse(text, &c));
  const vf_cfg_datasource *d = &c.datasource;
  CHECK_EQ_INT(d->form, VF_CFG_DS_DATASET);
  CHECK(d->uri == NULL);
  CHECK_EQ_INT(d->cache, VF_CFG_CACHE_EVICT);
  CHECK(d->vectors.present && d->vectors.has_parts);
  CHECK_EQ_INT(d->vectors.format, VF_CFG_FORMAT_NPY);
  CHECK_EQ_INT(d->vectors.parts.count, 410);
  CHECK_EQ_INT(d->vectors.parts.start, 0);
  CHECK_EQ_STR(d->vectors.parts.path, "laion/img_emb_{i}.npy");
  CHECK_EQ_STR(d->vectors.parts.link, "https://host/laion/img_emb_{i}.npy");
  CHECK_EQ_INT(d->vectors.cache, VF_CFG_CACHE_EVICT);     /* inherited */
  CHECK_EQ_INT(d->payload.format, VF_CFG_FORMAT_PARQUET); /* from the extension */
  CHECK_EQ_INT(d->payload.cache, VF_CFG_CACHE_KEEP);      /* overridden */
  CHECK_EQ_INT(d->payload.nexclude, 1);
  CHECK_EQ_STR(d->payload.exclude[0], "exif");
  CHECK_EQ_INT(d->payload.ncolumns, 2);
  CHECK_EQ_STR(d->payload.columns[1], "caption");
  CHECK_EQ_STR(d->payload.fill_null_json, "0");
  CHECK(d->payload.parts.link == NULL);
  CHECK_EQ_STR(d->id_expression, "row");
  CHECK_EQ_INT(c.vectors[0].source, VF_CFG_COMPONENT_VECTORS);
  CHECK(c.vectors[0].column == NULL);
  CHECK_EQ_INT(c.vectors[0].distance, CORPUS_DOT);
  CHECK_EQ_INT(c.vectors[1].source, VF_CFG_COMPONENT_PAYLOAD);
  CHECK_EQ_STR(c.vectors[1].column, "text_emb");
  char *p = NULL;
  vf_error err;
  CHECK_OK(vf_config_part_path(&d->vectors.parts, d->vectors.parts.link, 7, &p, &err));
  CHECK_EQ_STR(p, "https://host/laion/img_emb_7.npy");
  free(p);
  CHECK_OK(vf_config_part_path(&d->payload.parts, d->payload.parts.path, 12, &p, &err));
  CHECK_EQ_STR(p, "laion/metadata_0012.parquet");
  free(p);
  CHECK_STATUS(vf_config_part_path(&d->payload.parts, d->payload.parts.path, 410, &p, &err),
               VF_EUSAGE);
  CHECK_STATUS(vf_config_part_path(&d->payload.parts, d->payload.parts.path, -1, &p, &err),
               VF_EUSAGE);
  char *json = render(&c);
  CHECK(json && strstr(json, "\"vectors\":{\"format\":\"npy\",\"path\":null,\"parts\":{\"count\":"
                             "410,\"start\":0,\"path\":\"laion/img_emb_{i}.npy\",\"link\":"
                             "\"https://host/laion/img_emb_{i}.npy\"},\"columns\":null,"
                             "\"exclude\":null,\"fill_null\":null,\"cache\":\"evict\"}"));
  CHECK(json && strstr(json, "\"fill_null\":0,\"cache\":\"keep\""));
  free(json);
  vf_config_free(&c);

  /* literal braces, a start offset and a single-file component */
  CHECK_OK(parse("datasource:\n  type: dataset\n  vectors: {parts: {count: 2, start: 5, path: "
                 "'v{{x}}_{i:03d}.fbin'}}\nvectors: {a: {}}\n",
                 &c));
  CHECK_EQ_INT(c.datasource.vectors.format, VF_CFG_FORMAT_FBIN);
  CHECK_OK(vf_config_part_path(&c.datasource.vectors.parts, c.datasource.vectors.parts.path, 6, &p,
                               &err));
  CHECK_EQ_STR(p, "v{x}_006.fbin");
  free(p);
  vf_config_free(&c);
  CHECK_OK(parse("datasource: {type: dataset, vectors: {path: /d/v.npy}, payload: {path: "
                 "/d/p.parquet, fill_null: ''}}\nvectors: {a: {source: vectors}}\n",
                 &c));
  CHECK_EQ_STR(c.datasource.vectors.path, "/d/v.npy");
  CHECK(!c.datasource.vectors.has_parts);
  CHECK_EQ_STR(c.datasource.payload.fill_null_json, "\"\"");
  vf_config_free(&c);

  const char *base = "datasource:\n  type: dataset\n";
  char buf[1024];
#define DS(extra, vec) (snprintf(buf, sizeof buf, "%s%s%s", base, extra, vec), buf)
  CHECK_FAILS(DS("  payload: {path: p.parquet}\n", "vectors: {a: {}}\n"),
              "config.yaml:2:", "needs a 'vectors' component");
  CHECK_FAILS(DS("  vectors: {parts: {count: 3, path: v.npy}}\n", "vectors: {a: {}}\n"),
              "config.yaml:3:", "datasource.vectors.parts.path", "{i} placeholder");
  CHECK_FAILS(DS("  vectors: {parts: {count: 3, path: 'v{j}.npy'}}\n", "vectors: {a: {}}\n"),
              "config.yaml:3:", "bad placeholder");
  CHECK_FAILS(DS("  vectors: {parts: {count: 0, path: 'v{i}.npy'}}\n", "vectors: {a: {}}\n"),
              "datasource.vectors.parts.count", "expected an integer from 1");
  CHECK_FAILS(DS("  vectors: {parts: {path: 'v{i}.npy'}}\n", "vectors: {a: {}}\n"),
              "datasource.vectors.parts", "missing required key 'count'");
  CHECK_FAILS(
      DS("  vectors: {parts: {count: 2, path: 'v{i}.npy', cnt: 3}}\n", "vectors: {a: {}}\n"),
      "config.yaml:3:", "unknown key 'datasource.vectors.parts.cnt'",
      "expected one of: count, start, path, link");
  CHECK_FAILS(DS("  vectors: {path: v.bin}\n", "vectors: {a: {}}\n"), "missing 'format'");
  CHECK_FAILS(
      DS("  vectors: {path: v.npy, parts: {count: 1, path: v.npy}}\n", "vectors: {a: {}}\n"),
      "either 'path'");
  CHECK_FAILS(DS("  vectors: {path: v.npy}\n  payload: {path: p.npy}\n", "vectors: {a: {}}\n"),
              "config.yaml:4:", "payload component must be parquet");
  CHECK_FAILS(DS("  vectors: {path: v.npy, cache: sometimes}\n", "vectors: {a: {}}\n"),
              "datasource.vectors.cache", "'sometimes' is not one of: keep, evict");
  CHECK_FAILS(DS("  vectors: {path: v.npy}\n", "vectors: {a: {column: x}}\n"),
              "config.yaml:4:", "vectors.a.column", "npy files have no columns");
  CHECK_FAILS(DS("  vectors: {path: v.npy}\n", "vectors: {a: {type: sparse}}\n"),
              "dense vectors only");
  CHECK_FAILS(DS("  vectors: {path: v.parquet}\n", "vectors: {a: {}}\n"),
              "missing required key 'column'");
  CHECK_FAILS(DS("  vectors: {path: v.npy}\n", "vectors: {a: {source: payload, column: c}}\n"),
              "vectors.a.source", "no 'payload' component");
  CHECK_FAILS(DS("  vectors: {path: v.npy}\n  uri: /x\n", "vectors: {a: {}}\n"),
              "config.yaml:4:", "'datasource.uri' does not apply to type: dataset");
  CHECK_FAILS(DS("  vectors: {parts: {count: 2, path: 'v{i}.npy'}}\n  payload: {parts: {count: 3, "
                 "path: 'p{i}.parquet'}}\n",
                 "vectors: {a: {}}\n"),
              "datasource.payload.parts.count", "3, but the vectors have 2 parts");
  CHECK_FAILS(DS("  vectors: {path: v.npy, fill_null: [1]}\n", "vectors: {a: {}}\n"),
              "datasource.vectors.fill_null", "expected a single value");
  CHECK_FAILS(MIN_DS "vectors: {a: {column: c, source: vectors}}\n",
              "config.yaml:2:", "vectors.a.source", "type: dataset");
#undef DS
}

VF_TEST(env_expansion) {
  setenv("VFT_DIR", "/corpora/x", 1);
  setenv("VFT_BATCH", "123", 1);
  setenv("VFT_EMPTY", "", 1);
  unsetenv("VFT_UNSET");
  vf_config c;
  CHECK_OK(parse(MIN_VEC
                 "datasource: {uri: '${VFT_DIR}/sub', id_expression: \"${VFT_UNSET:-row}\"}\n"
                 "vectorstore:\n  collection_name: c-${VFT_EMPTY:-dflt}-${VFT_UNSET:-${VFT_BATCH}}"
                 "-$$HOME-$${X}-$-end$\n"
                 "loader: {batch_size: \"${VFT_BATCH}\", retries: '${VFT_UNSET:-7}'}\n",
                 &c));
  CHECK_EQ_STR(c.datasource.uri, "/corpora/x/sub");
  CHECK_EQ_STR(c.datasource.id_expression, "row");
  CHECK_EQ_STR(c.vectorstore.collection_name, "c-dflt-123-$HOME-${X}-$-end$");
  CHECK_EQ_INT(c.loader.batch_size, 123);
  CHECK_EQ_INT(c.loader.retries, 7);
  vf_config_free(&c);
  /* set-but-empty without a default is the empty string (then rejected where empty is wrong) */
  CHECK_FAILS(MIN_VEC "datasource: {uri: '${VFT_EMPTY}'}\n", "config.yaml:2:", "datasource.uri",
              "must not be empty");
  /* keys are not expanded */
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {'${VFT_BATCH}': 1}\n", "unknown key 'loader.${VFT_BATCH}'");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  collection_name: ${VFT_UNSET}\n",
              "config.yaml:4:", "vectorstore.collection_name", "'VFT_UNSET' is not set");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {params: {hnsw: {m: '${VFT_UNSET}'}}}\n",
              "config.yaml:3:", "vectorstore.params.hnsw.m", "VFT_UNSET");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {partition: '${}'}\n", "resources.partition",
              "expected a name");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {partition: '${VFT_DIR'}\n", "resources.partition",
              "expected '}' or ':-default}'");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {partition: '${VFT_UNSET:-abc'}\n",
              "unterminated '${VFT_UNSET:-'");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {partition: '${VFT_DIR-x}'}\n", "expected '}'");
  /* unquoted ${VAR} inside a flow mapping is a YAML error; the message says what to do */
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: ${VFT_BATCH}}\n",
              "config.yaml:3:", "YAML syntax error", "quote values");
  /* block style needs no quotes */
  CHECK_OK(parse(MIN_VEC MIN_DS "loader:\n  batch_size: ${VFT_BATCH}\n", &c));
  CHECK_EQ_INT(c.loader.batch_size, 123);
  vf_config_free(&c);
}

VF_TEST(unknown_keys_with_lines) {
  CHECK_FAILS(MIN_VEC MIN_DS "loaderr: {batch_size: 1}\n", "config.yaml:3: unknown key 'loaderr'",
              "expected one of: vectors, datasource, vectorstore, loader, dispatch, resources");
  CHECK_FAILS(MIN_VEC "datasource:\n  id_expression: row\n  urll: /x\n",
              "config.yaml:4: unknown key 'datasource.urll' (expected one of: type, uri, "
              "file_list, id_expression, payload_fields, id_root");
  CHECK_FAILS("vectors:\n  dense:\n    type: dense\n    colum: e\n" MIN_DS,
              "config.yaml:4: unknown key 'vectors.dense.colum' (expected one of: type, column, "
              "distance, comparator, source, datatype, on_disk, hnsw, quantization, modifier, "
              "index)");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  params:\n    hnsw:\n      m: 16\n      ef: 3\n",
              "config.yaml:7: unknown key 'vectorstore.params.hnsw.ef'", "ef_construct");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  params:\n    optimizer: {}\n",
              "config.yaml:5: unknown key 'vectorstore.params.optimizer'", "optimizers");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  params:\n    optimizers: {indexing: 1}\n",
              "config.yaml:5: unknown key 'vectorstore.params.optimizers.indexing'",
              "indexing_threshold");
  CHECK_FAILS(MIN_VEC MIN_DS
              "vectorstore:\n  params:\n    quantization: {scalar: {}, binary: {}}\n",
              "config.yaml:5:", "exactly one of");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  params:\n    quantization: {int8: {}}\n",
              "unknown key 'vectorstore.params.quantization.int8'");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {kind: local}\n",
              "config.yaml:3: unknown key 'vectorstore.kind'");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch: 1}\n", "config.yaml:3: unknown key 'loader.batch'");
  CHECK_FAILS(MIN_VEC MIN_DS "dispatch: {shards: 1}\n", "unknown key 'dispatch.shards'");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {mem: 1}\n", "unknown key 'resources.mem'");
}

VF_TEST(wrong_types_and_enums) {
  CHECK_FAILS(MIN_VEC MIN_DS "loader:\n  batch_size: abc\n", "config.yaml:4:", "loader.batch_size",
              "expected an integer from 1 to 1000000, got 'abc'");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: 0}\n", "loader.batch_size", "got '0'");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: -5}\n", "loader.batch_size");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: 1.5}\n", "loader.batch_size");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: 99999999999999999999999}\n",
              "loader.batch_size");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: [1]}\n", "loader.batch_size",
              "expected a single value, got a list");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {concurrency: 5000}\n", "loader.concurrency");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {wait: maybe}\n", "loader.wait",
              "expected true or false, got 'maybe'");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {skip_bad_rows: 1}\n", "loader.skip_bad_rows");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: [1, 2]\n", "config.yaml:3:", "loader: expected a mapping");
  CHECK_FAILS("vectors: [a, b]\n" MIN_DS, "config.yaml:1:", "vectors: expected a mapping");
  CHECK_FAILS("vectors: {v: emb}\n" MIN_DS, "vectors.v: expected a mapping");
  CHECK_FAILS("vectors: {}\n" MIN_DS, "at least one vector");
  CHECK_FAILS("vectors: {v: {column: e, distance: l2}}\n" MIN_DS,
              "config.yaml:1:", "vectors.v.distance",
              "'l2' is not one of: cosine, dot, euclid, manhattan");
  CHECK_FAILS("vectors: {v: {column: e, type: binary}}\n" MIN_DS, "vectors.v.type",
              "dense, sparse, multivector");
  CHECK_FAILS("vectors: {v: {column: e, comparator: max_sim}}\n" MIN_DS, "vectors.v.comparator",
              "multivector vectors only");
  CHECK_FAILS("vectors: {v: {column: e, type: multivector, comparator: sum}}\n" MIN_DS,
              "vectors.v.comparator", "'sum' is not one of: max_sim");
  CHECK_FAILS("vectors: {v: {column: e, type: sparse, distance: cosine}}\n" MIN_DS,
              "vectors.v.distance", "dot product only");
  CHECK_FAILS("vectors: {v: {column: ''}}\n" MIN_DS, "vectors.v.column", "must not be empty");
  CHECK_FAILS("vectors: {v: {column: {a: b}}}\n" MIN_DS, "vectors.v.column",
              "expected a single value, got a mapping");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {type: milvus}\n", "vectorstore.type",
              "'milvus' is not one of: local, qdrant");
  CHECK_FAILS(MIN_VEC MIN_DS "dispatch: {engine: k8s}\n", "dispatch.engine", "slurm, local");
  CHECK_FAILS(MIN_VEC MIN_DS "dispatch: {num_shards: 0}\n", "dispatch.num_shards");
  CHECK_FAILS(MIN_VEC MIN_DS "dispatch: {run_name: ../x}\n", "dispatch.run_name");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {memory: 32G}\n", "resources.memory", "got '32G'");
  CHECK_FAILS(MIN_VEC MIN_DS "resources: {cpus: 0}\n", "resources.cpus");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {params: {shard_number: 0}}\n",
              "vectorstore.params.shard_number");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {params: {recreate: sure}}\n",
              "vectorstore.params.recreate");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {params: {hnsw: 16}}\n", "vectorstore.params.hnsw",
              "expected a mapping");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {params: {hnsw: {m: .inf}}}\n",
              "vectorstore.params.hnsw.m", "NaN");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {collection_name: a/b}\n",
              "vectorstore.collection_name");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {collection_name: ..}\n", "vectorstore.collection_name");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {type: qdrant}\n", "needs 'url'");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {type: qdrant, url: localhost:6333}\n",
              "vectorstore.url", "http://");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  url: http://h:6333\n",
              "config.yaml:4:", "'vectorstore.url' applies to type: qdrant only");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore: {type: qdrant, url: 'http://h', path: /x}\n",
              "'vectorstore.path' applies to type: local only");
  CHECK_FAILS(MIN_VEC "datasource: {uri: 'ftp://x/y'}\n", "config.yaml:2:", "datasource.uri");
  CHECK_FAILS(MIN_VEC "datasource: {file_list: /x/a.parquet}\n", "datasource.file_list",
              "expected a list");
  CHECK_FAILS(MIN_VEC "datasource: {file_list: []}\n", "datasource.file_list", "empty");
  CHECK_FAILS(MIN_VEC "datasource: {file_list: [/a.parquet, /b.parquet, /a.parquet]}\n",
              "datasource.file_list[2]", "same file as entry 0");
  CHECK_FAILS(MIN_VEC "datasource: {uri: /x, id_expression: 'nope(('}\n",
              "datasource.id_expression");
  CHECK_FAILS(MIN_VEC "datasource: {uri: /x, payload_fields: text}\n", "datasource.payload_fields",
              "expected a mapping");
  CHECK_FAILS(MIN_VEC "datasource: {uri: /x, payload_fields: [a, b, a]}\n",
              "datasource.payload_fields[2]: duplicate payload field 'a' (also entry 0)");
  CHECK_FAILS(MIN_VEC "datasource:\n  file_list: [/z.parquet, /b.parquet, /a.parquet, /b.parquet,\n"
                      "    /a.parquet]\n",
              "config.yaml:3:", "datasource.file_list[3]: the same file as entry 1");
  /* YAML 1.1 spellings are accepted */
  vf_config c;
  CHECK_OK(parse(MIN_VEC MIN_DS "loader: {wait: off, skip_bad_rows: Yes, batch_size: +1_0}\n", &c));
  CHECK(!c.loader.wait && c.loader.skip_bad_rows);
  CHECK_EQ_INT(c.loader.batch_size, 10);
  vf_config_free(&c);
  /* datasource.binary_as_string (issue 14): a bool, rendered by load inspect */
  CHECK_OK(parse(MIN_VEC "datasource: {uri: /data/c, binary_as_string: true}\n", &c));
  CHECK(c.datasource.binary_as_string);
  char *json = render(&c);
  CHECK(json && strstr(json, "\"binary_as_string\":true") != NULL);
  free(json);
  vf_config_free(&c);
  CHECK_FAILS(MIN_VEC "datasource: {uri: /data/c, binary_as_string: base64}\n",
              "datasource.binary_as_string");
}

VF_TEST(missing_required) {
  CHECK_FAILS(MIN_DS, "config.yaml:1: missing required key 'vectors'");
  CHECK_FAILS(MIN_VEC, "config.yaml:1: missing required key 'datasource'");
  CHECK_FAILS(MIN_VEC "datasource: {id_expression: row}\n",
              "config.yaml:2:", "missing required key 'uri' or 'file_list'");
  CHECK_FAILS("vectors:\n  v: {distance: dot}\n" MIN_DS, "config.yaml:2:", "vectors.v",
              "missing required key 'column'");
  CHECK_FAILS("vectors:\n  v:\n" MIN_DS, "config.yaml:2:", "vectors.v");
  CHECK_FAILS("", "config.yaml:1:", "empty config");
  CHECK_FAILS("# only a comment\n", "empty config");
  CHECK_FAILS("- a\n- b\n", "config.yaml:1:", "expected a mapping of sections");
  CHECK_FAILS("just text\n", "expected a mapping of sections");
}

VF_TEST(yaml_level_errors) {
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: 1}\nloader: {retries: 1}\n",
              "config.yaml:4: duplicate key 'loader' (first at line 3)");
  CHECK_FAILS("vectors:\n  a: {column: x}\n  b: {column: y}\n  a: {column: z}\n" MIN_DS,
              "config.yaml:4: duplicate key 'vectors.a' (first at line 2)");
  CHECK_FAILS(MIN_VEC MIN_DS "vectorstore:\n  params:\n    hnsw:\n      m: 1\n      m: 2\n",
              "config.yaml:7: duplicate key 'vectorstore.params.hnsw.m' (first at line 6)");
  CHECK_FAILS(MIN_VEC "datasource:\n  uri: /x\n  payload_fields: {a: b, c: d, a: e}\n",
              "config.yaml:4: duplicate key 'datasource.payload_fields.a'");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: &l {batch_size: 1}\ndispatch: *l\n",
              "config.yaml:4:", "aliases");
  CHECK_FAILS(MIN_VEC MIN_DS "---\n" MIN_VEC, "more than one YAML document");
  CHECK_FAILS(MIN_VEC "datasource:\n  uri: /x\n   bad: indent\n",
              "config.yaml:4:", "YAML syntax error");
  CHECK_FAILS(MIN_VEC "datasource: {uri: /x\n", "YAML syntax error");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: !custom {batch_size: 1}\n",
              "config.yaml:3:", "unsupported YAML tag");
  CHECK_FAILS(MIN_VEC MIN_DS "{a: 1}: 2\n", "mapping keys must be plain values");
  CHECK_FAILS(MIN_VEC MIN_DS "loader: {batch_size: \"1\\0\"}\n", "NUL character");
  CHECK_FAILS("vectors: {v: {column: \"\xff\xfe\"}}\n" MIN_DS, "config.yaml:1:", "YAML");
  /* !!str keeps a value a string; !!int on a quoted value makes it typed */
  vf_config c;
  CHECK_OK(parse(MIN_VEC MIN_DS "loader: {batch_size: !!int '42'}\n"
                                "vectorstore: {params: {hnsw: {m: !!str 16}}}\n",
                 &c));
  CHECK_EQ_INT(c.loader.batch_size, 42);
  CHECK_EQ_STR(c.vectorstore.params_json, "{\"hnsw\":{\"m\":\"16\"}}");
  vf_config_free(&c);
  /* deep nesting is refused, not recursed into */
  char deep[600];
  size_t n = 0;
  n += (size_t)snprintf(deep + n, sizeof deep - n, MIN_VEC MIN_DS "vectorstore: {params: ");
  for (int i = 0; i < 80; i++)
    deep[n++] = '[';
  for (int i = 0; i < 80; i++)
    deep[n++] = ']';
  deep[n++] = '}';
  deep[n++] = '\n';
  deep[n] = 0;
  CHECK_FAILS(deep, "nested deeper than");
}

VF_TEST(params_json_types) {
  setenv("VFT_M", "32", 1);
  vf_config c;
  CHECK_OK(parse(MIN_VEC MIN_DS
                 "vectorstore:\n  params:\n    hnsw:\n      m: '${VFT_M}'\n      on_disk: false\n"
                 "      ef_construct: ${VFT_M}\n"
                 "    optimizers: {deleted_threshold: 0.25, memmap_threshold: ~}\n"
                 "    quantization: {product: {compression: x16, always_ram: on}}\n",
                 &c));
  /* quoted stays a string; plain scalars are typed after expansion */
  CHECK_EQ_STR(c.vectorstore.params_json,
               "{\"hnsw\":{\"m\":\"32\",\"on_disk\":false,\"ef_construct\":32},\"optimizers\":"
               "{\"deleted_threshold\":0.25,\"memmap_threshold\":null},\"quantization\":"
               "{\"product\":{\"compression\":\"x16\",\"always_ram\":true}}}");
  vf_config_free(&c);
}

VF_TEST(secrets_masked_everywhere) {
  setenv("VFT_API_KEY", "sk-live-SHOULD-NOT-LEAK-1", 1);
  setenv("VFT_TOKEN", "tok-SHOULD-NOT-LEAK-2", 1);
  setenv("VFT_PASSWORD", "pw-SHOULD-NOT-LEAK-3", 1);
  setenv("VFT_PLAIN", "visible-value", 1);
  vf_config c;
  CHECK_OK(parse(MIN_VEC
                 "datasource:\n  uri: /data/${VFT_TOKEN}/c\n  payload_fields: {a: '${VFT_PLAIN}', "
                 "b: '${VFT_PASSWORD}'}\n"
                 "vectorstore:\n  type: qdrant\n  url: 'https://u:${VFT_PASSWORD}@h:6333'\n"
                 "  api_key: ${VFT_API_KEY}\n  collection_name: ${VFT_PLAIN}\n"
                 "  params: {hnsw: {m: 8}, optimizers: {indexing_threshold: '${VFT_API_KEY}'}}\n",
                 &c));
  /* the struct has the real values: the stores need them */
  CHECK_EQ_STR(c.vectorstore.api_key, "sk-live-SHOULD-NOT-LEAK-1");
  CHECK_EQ_STR(c.datasource.uri, "/data/tok-SHOULD-NOT-LEAK-2/c");
  CHECK(strstr(c.vectorstore.params_json, "sk-live-SHOULD-NOT-LEAK-1") != NULL);
  char *json = render(&c);
  CHECK(json != NULL);
  if (json) {
    CHECK(strstr(json, "SHOULD-NOT-LEAK") == NULL);
    CHECK(strstr(json, "\"api_key\":\"****\"") != NULL);
    CHECK(strstr(json, "\"url\":\"****\"") != NULL);
    CHECK(strstr(json, "\"uri\":\"****\"") != NULL);
    CHECK(strstr(json, "\"payload_fields\":{\"a\":\"visible-value\",\"b\":\"****\"}") != NULL);
    CHECK(strstr(json, "\"collection_name\":\"visible-value\"") != NULL);
    CHECK(strstr(json, "\"params\":{\"hnsw\":{\"m\":8},\"optimizers\":{\"indexing_threshold\":"
                       "\"****\"}}") != NULL);
  }
  free(json);
  vf_config_free(&c);
  /* a literal api_key is a secret too */
  CHECK_OK(parse(MIN_VEC MIN_DS "vectorstore: {type: qdrant, url: 'http://h', api_key: "
                                "literal-SHOULD-NOT-LEAK}\n",
                 &c));
  json = render(&c);
  CHECK(json && !strstr(json, "SHOULD-NOT-LEAK") && strstr(json, "\"api_key\":\"****\""));
  free(json);
  vf_config_free(&c);
  /* errors on secret values show "****", never the value */
  const char *bad[] = {
      MIN_VEC MIN_DS "loader: {batch_size: '${VFT_API_KEY}'}\n",
      MIN_VEC MIN_DS "loader: {wait: '${VFT_TOKEN}'}\n",
      MIN_VEC MIN_DS "vectorstore: {type: '${VFT_TOKEN}'}\n",
      MIN_VEC MIN_DS "vectorstore: {type: qdrant, url: '${VFT_TOKEN}'}\n",
      MIN_VEC MIN_DS "vectorstore: {collection_name: 'a/${VFT_PASSWORD}'}\n",
      MIN_VEC "datasource: {uri: 'ftp://${VFT_TOKEN}'}\n",
      MIN_VEC "datasource: {type: s3, bucket: 'a/${VFT_TOKEN}'}\n",
      MIN_VEC "datasource: {type: huggingface, repo_id: '${VFT_TOKEN}'}\n",
      MIN_VEC "datasource: {uri: /x, id_expression: '${VFT_TOKEN}(('}\n",
      MIN_VEC "datasource: {uri: /x, payload_fields: ['${VFT_TOKEN}', '${VFT_TOKEN}']}\n",
      MIN_VEC "datasource: {uri: /x, payload_fields: {x: '${VFT_TOKEN}', x: 1}}\n",
      "vectors: {v: {column: e, distance: '${VFT_PASSWORD}'}}\n" MIN_DS,
      "vectors: {v: {column: e, distance: '${VFT_UNSET_TOKEN:-${VFT_PASSWORD}}'}}\n" MIN_DS,
      MIN_VEC MIN_DS "resources: {memory: '${VFT_API_KEY}'}\n",
      MIN_VEC MIN_DS "vectorstore: {params: {shard_number: '${VFT_API_KEY}'}}\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    vf_config c2;
    vf_status st = parse(bad[i], &c2);
    if (st == VF_OK) vf_test_fail(__FILE__, __LINE__, "case %zu parsed", i);
    if (strstr(g_err.msg, "SHOULD-NOT-LEAK"))
      vf_test_fail(__FILE__, __LINE__, "case %zu leaks: %s", i, g_err.msg);
    if (!strstr(g_err.msg, "config.yaml:"))
      vf_test_fail(__FILE__, __LINE__, "case %zu: no location: %s", i, g_err.msg);
    vf_config_free(&c2);
  }
  parse(MIN_VEC MIN_DS "loader: {batch_size: '${VFT_API_KEY}'}\n", &c);
  CHECK(strstr(g_err.msg, "got '****'") != NULL);
  /* a non-secret value is shown */
  parse(MIN_VEC MIN_DS "loader: {batch_size: '${VFT_PLAIN}'}\n", &c);
  CHECK(strstr(g_err.msg, "got 'visible-value'") != NULL);
}

/* the source tree: $VF_SRC, else two levels above this file when the build used an absolute
 * path for it (CMake does) */
static const char *src_dir(void) {
  const char *s = getenv("VF_SRC");
  if (s && *s) return s;
  static char dir[1024];
  const char *f = __FILE__, *tail = strstr(f, "/tests/corpus/test_config.c");
  if (f[0] != '/' || !tail || (size_t)(tail - f) >= sizeof dir) return NULL;
  memcpy(dir, f, (size_t)(tail - f));
  dir[tail - f] = 0;
  return dir;
}

VF_TEST(example_configs_load) {
  const char *src = src_dir();
  if (!src) {
    vf_test_skip("VF_SRC not set");
    return;
  }
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/data/configs", src);
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d) return;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    vf_config c;
    vf_error err;
    vf_status st = vf_config_load(path, &c, &err);
    if (st != VF_OK) vf_test_fail(__FILE__, __LINE__, "%s: %s", path, err.msg);
    char *json = st == VF_OK ? render(&c) : NULL;
    if (st == VF_OK && !json) vf_test_fail(__FILE__, __LINE__, "%s: render failed", path);
    free(json);
    vf_config_free(&c);
    n++;
  }
  closedir(d);
  CHECK(n >= 5);
  /* the DESIGN.md example, checked in detail */
  char path[1400];
  unsetenv("QDRANT_URL");
  unsetenv("QDRANT_API_KEY");
  snprintf(path, sizeof path, "%s/python_loader.yaml", dir);
  vf_config c;
  vf_error err;
  CHECK_OK(vf_config_load(path, &c, &err));
  CHECK_EQ_STR(c.vectorstore.url, "http://localhost:6333");
  CHECK(c.vectorstore.api_key == NULL); /* empty = not given */
  CHECK_EQ_INT(c.nvectors, 3);
  vf_config_free(&c);
  snprintf(path, sizeof path, "%s/split_s3.yaml", dir);
  CHECK_OK(vf_config_load(path, &c, &err));
  CHECK_EQ_STR(c.datasource.uri, "s3://corpora/fineweb/bge/");
  vf_config_free(&c);
  snprintf(path, sizeof path, "%s/no-such-config.yaml", dir);
  CHECK_STATUS(vf_config_load(path, &c, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "no-such-config.yaml") != NULL);
}

VF_TEST(files_and_inspect) {
  const char *src = src_dir();
  if (!src) {
    vf_test_skip("VF_SRC not set");
    return;
  }
  char text[4096];
  snprintf(text, sizeof text,
           MIN_VEC "datasource: {uri: '%s/examples/corpus', payload_fields: {text: text}}\n"
                   "vectorstore: {collection_name: ex, api_key: '', path: /tmp/st}\n",
           src);
  vf_config c;
  CHECK_OK(parse(text, &c));
  vf_error err;
  corpus_files files;
  CHECK_OK(vf_config_files(&c, &files, &err));
  CHECK_EQ_INT(files.n, 2);
  if (files.n == 2) {
    CHECK(strstr(files.files[0].key, "rank00/batch_00000000.parquet") != NULL);
    CHECK(strcmp(files.files[0].key, files.files[1].key) < 0);
  }
  corpus_files_free(&files);
  vf_buf b;
  vf_buf_init(&b, 0);
  CHECK_OK(vf_config_inspect(&c, &b, &err));
  vf_buf_append(&b, "", 1, &err);
  const char *j = (const char *)b.data;
  CHECK(j && strncmp(j, "{\"config\":{\"vectors\":", 21) == 0);
  CHECK(j && strstr(j, "\"total_rows\":6000,\"empty_files\":0,\"collection\":\"ex\",\"store\":\"local\"}"));
  CHECK(j && strstr(j, "batch_00000001.parquet\",\"rows\":3000}"));
  vf_buf_free(&b);
  vf_config_free(&c);

  /* file_list: given order does not matter (sorted by key); id_root applied */
  snprintf(text, sizeof text,
           MIN_VEC "datasource:\n  file_list: ['%s/examples/corpus/rank00/batch_00000001.parquet',"
                   " '%s/examples/corpus/rank00/batch_00000000.parquet']\n"
                   "  id_root: '%s/examples/corpus'\n",
           src, src, src);
  CHECK_OK(parse(text, &c));
  CHECK_OK(vf_config_files(&c, &files, &err));
  CHECK_EQ_INT(files.n, 2);
  if (files.n == 2) {
    CHECK_EQ_STR(files.files[0].key, "rank00/batch_00000000.parquet");
    CHECK_EQ_STR(files.files[1].key, "rank00/batch_00000001.parquet");
  }
  CHECK(files.prefix && strstr(files.prefix, "examples/corpus/rank00"));
  corpus_files_free(&files);
  vf_buf_init(&b, 0);
  CHECK_OK(vf_config_inspect(&c, &b, &err));
  vf_buf_free(&b);
  vf_config_free(&c);

  /* a missing corpus is an error naming it */
  CHECK_OK(parse(MIN_VEC "datasource: {uri: /nonexistent/vforge-corpus}\n", &c));
  vf_buf_init(&b, 0);
  CHECK_STATUS(vf_config_inspect(&c, &b, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "/nonexistent/vforge-corpus") != NULL);
  vf_buf_free(&b);
  vf_config_free(&c);

  /* dataset components: parts are listed, parquet footers read, missing files flagged */
  const char *tmp = vf_test_tmpdir();
  snprintf(
      text, sizeof text,
      "datasource:\n  type: dataset\n  vectors: {parts: {count: 2, path: '%s/v_{i}.npy'}}\n"
      "  payload: {parts: {count: 2, path: '%s/examples/corpus/rank00/batch_0000000{i}.parquet'}}\n"
      "vectors: {img: {}}\n",
      tmp, src);
  CHECK_OK(parse(text, &c));
  vf_buf_init(&b, 0);
  CHECK_OK(vf_config_inspect(&c, &b, &err));
  vf_buf_append(&b, "", 1, &err);
  j = (const char *)b.data;
  CHECK(j && strstr(j, "\"component\":\"vectors\"") && strstr(j, "\"exists\":false,\"rows\":null"));
  CHECK(j && strstr(j, "\"component\":\"payload\"") && strstr(j, "\"exists\":true,\"rows\":3000"));
  CHECK(j && strstr(j, "\"total_rows\":6000"));
  vf_buf_free(&b);
  vf_config_free(&c);
}

/* issue 18: the gRPC transport keys, per-vector store parameters, payload_indexes, defer */
#define QD_VS "vectorstore: {type: qdrant, url: 'http://h:6333', collection_name: c"

VF_TEST(qdrant_grpc_and_collection_keys) {
  vf_config cfg;
  CHECK_OK(parse(MIN_DS QD_VS "}\nvectors: {v: {column: emb}}\n", &cfg));
  CHECK(!cfg.vectorstore.prefer_grpc && cfg.vectorstore.grpc_port == 6334 &&
        cfg.vectorstore.grpc_max_message_mb == 64);
  CHECK(cfg.vectors[0].params_json == NULL);
  vf_config_free(&cfg);
  CHECK_OK(parse(MIN_DS QD_VS ", prefer_grpc: true, grpc_port: 7334, grpc_max_message_mb: 16,\n"
                 "  params: {defer: hnsw_m, payload_indexes: {mode: specific, fields: [a, b], "
                 "field_types: {a: keyword, b: datetime}}}}\n"
                 "vectors:\n"
                 "  d: {column: e, datatype: float16, on_disk: true, hnsw: {m: 0, ef_construct: 64},\n"
                 "      quantization: {scalar: {type: int8, quantile: 0.99, always_ram: true}}}\n"
                 "  s: {type: sparse, column: sp, modifier: idf, index: {on_disk: false, datatype: uint8, full_scan_threshold: 10}}\n"
                 "  m: {type: multivector, column: mv, quantization: {binary: {always_ram: true}}}\n",
                 &cfg));
  CHECK(cfg.vectorstore.prefer_grpc && cfg.vectorstore.grpc_port == 7334 &&
        cfg.vectorstore.grpc_max_message_mb == 16);
  CHECK(cfg.vectors[0].params_json &&
        strcmp(cfg.vectors[0].params_json,
               "{\"datatype\":\"float16\",\"on_disk\":true,\"hnsw\":{\"m\":0,\"ef_construct\":64},"
               "\"quantization\":{\"scalar\":{\"type\":\"int8\",\"quantile\":0.98999999999999999,"
               "\"always_ram\":true}}}") == 0);
  CHECK(cfg.vectors[1].params_json &&
        strcmp(cfg.vectors[1].params_json,
               "{\"modifier\":\"idf\",\"index\":{\"on_disk\":false,\"datatype\":\"uint8\","
               "\"full_scan_threshold\":10}}") == 0);
  CHECK(strstr(cfg.vectorstore.params_json, "\"defer\":\"hnsw_m\"") != NULL);
  char *r = render(&cfg);
  CHECK(r && strstr(r, "\"prefer_grpc\":true") && strstr(r, "\"grpc_port\":7334") &&
        strstr(r, "\"params\":{\"modifier\":\"idf\""));
  free(r);
  vf_config_free(&cfg);
  /* refused, naming the key */
  CHECK_FAILS(MIN_DS "vectorstore: {type: local, prefer_grpc: true}\n" MIN_VEC,
              "'vectorstore.prefer_grpc' applies to type: qdrant only");
  CHECK_FAILS(MIN_DS QD_VS ", grpc_port: 70000}\n" MIN_VEC, "vectorstore.grpc_port");
  CHECK_FAILS(MIN_DS QD_VS ", prefer_grpc: yes please}\n" MIN_VEC, "vectorstore.prefer_grpc");
  CHECK_FAILS(MIN_DS QD_VS ", grpc_max_message_mb: 0}\n" MIN_VEC, "vectorstore.grpc_max_message_mb");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {column: e, datatype: int4}}\n", "vectors.v.datatype",
              "float32, float16, uint8");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {column: e, modifier: idf}}\n", "vectors.v.modifier",
              "applies to sparse vectors only");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {type: sparse, column: e, on_disk: true}}\n",
              "vectors.v.on_disk", "applies to dense and multivector vectors only");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {column: e, hnsw: {mm: 3}}}\n", "vectors.v.hnsw.mm");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {column: e, quantization: {scalar: {}, binary: {}}}}\n",
              "vectors.v.quantization", "exactly one of");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {type: sparse, column: e, index: {on_disk: 3}}}\n",
              "vectors.v.index.on_disk");
  CHECK_FAILS(MIN_DS QD_VS "}\nvectors: {v: {type: sparse, column: e, modifier: bm25}}\n",
              "vectors.v.modifier", "none, idf");
  CHECK_FAILS(MIN_DS QD_VS ", params: {defer: later}}\n" MIN_VEC, "vectorstore.params.defer",
              "indexing_threshold, hnsw_m, none");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {mode: some}}}\n" MIN_VEC,
              "vectorstore.params.payload_indexes.mode");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {mode: all, fields: [a]}}}\n" MIN_VEC,
              "payload_indexes.fields: applies to mode: specific");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {mode: specific}}}\n" MIN_VEC,
              "mode: specific needs a non-empty 'fields' list");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {mode: all, field_types: {a: string}}}}\n" MIN_VEC,
              "payload_indexes.field_types.a", "keyword, integer");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {fields: [a]}}}\n" MIN_VEC,
              "applies to mode: specific (mode is none)");
  CHECK_FAILS(MIN_DS QD_VS ", params: {payload_indexes: {mode: all, extra: 1}}}\n" MIN_VEC,
              "payload_indexes.extra");
}
