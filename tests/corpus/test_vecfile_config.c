/* Unit tests for vf_config_vector_file() (src/corpus/config.c, issue 15 item 2): the config a
 * vector file or an ann-filtering bundle becomes (src/corpus/source.c) is built directly, no
 * longer rendered as YAML text for vf_config_parse().  Each case here builds it both ways — the
 * YAML the old route wrote (paths single-quoted, '' for ', $$ for $) through the parser, and the
 * constructor — and requires the same resolved config: the same rendered JSON (every section,
 * every default) and the same fields the renderer does not show (name, the vector's line and
 * source, the components). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vforge/config.h"

static const char *const FORMATS[] = {"parquet", "npy", "fbin", "hdf5", "jsonl"};
static const char *const DISTS[] = {"cosine", "dot", "euclid", "manhattan"};

/* the old route's quoting: a YAML single-quoted scalar, `$` doubled (values are expanded) */
static void quoted(vf_buf *b, const char *s) {
  vf_buf_append(b, "'", 1, NULL);
  for (const char *p = s; *p; p++) {
    if (*p == '\'') vf_buf_append(b, "''", 2, NULL);
    else if (*p == '$') vf_buf_append(b, "$$", 2, NULL);
    else vf_buf_append(b, p, 1, NULL);
  }
  vf_buf_append(b, "'", 1, NULL);
}

static void render(const vf_config *cfg, vf_buf *out) {
  vf_error err;
  vf_buf_init(out, 1 << 20);
  CHECK_OK(vf_config_render_json(cfg, out, &err));
  vf_buf_append(out, "", 1, NULL);
}

static void same_config(const char *name, vf_cfg_format fmt, const char *path, const char *payload,
                        corpus_distance dist) {
  vf_buf y;
  vf_buf_init(&y, 1 << 20);
  vf_buf_printf(&y, NULL,
                "vectors:\n  vector: {type: dense, distance: %s}\n"
                "datasource:\n  type: dataset\n  id_expression: row\n  vectors: {format: %s, path: ",
                DISTS[dist], FORMATS[fmt]);
  quoted(&y, path);
  vf_buf_append(&y, "}\n", 2, NULL);
  if (payload) {
    vf_buf_printf(&y, NULL, "  payload: {format: jsonl, path: ");
    quoted(&y, payload);
    vf_buf_append(&y, "}\n", 2, NULL);
  }
  vf_config a, b;
  vf_error err;
  CHECK_OK(vf_config_parse((const char *)y.data, y.len, name, &a, &err));
  CHECK_OK(vf_config_vector_file(name, fmt, path, payload, dist, &b, &err));
  vf_buf ja, jb;
  render(&a, &ja);
  render(&b, &jb);
  CHECK_EQ_STR((const char *)ja.data, (const char *)jb.data);
  CHECK_EQ_STR(a.name, b.name);
  CHECK_EQ_INT(a.nvectors, b.nvectors);
  if (a.nvectors == 1 && b.nvectors == 1) {
    const vf_cfg_vector *va = &a.vectors[0], *vb = &b.vectors[0];
    CHECK_EQ_STR(va->name, vb->name);
    CHECK(va->column == NULL && vb->column == NULL);
    CHECK(va->params_json == NULL && vb->params_json == NULL);
    CHECK_EQ_INT(va->kind, vb->kind);
    CHECK_EQ_INT(va->distance, vb->distance);
    CHECK_EQ_INT(va->distance_given, vb->distance_given);
    CHECK_EQ_INT(va->max_sim, vb->max_sim);
    CHECK_EQ_INT(va->source, vb->source);
    CHECK_EQ_INT(va->line, vb->line);
    CHECK_EQ_INT(vf_config_vector_distance(&a, va), vf_config_vector_distance(&b, vb));
  }
  const vf_cfg_datasource *da = &a.datasource, *db = &b.datasource;
  CHECK_EQ_INT(da->form, db->form);
  CHECK_EQ_INT(da->cache, db->cache);
  CHECK_EQ_STR(da->id_expression, db->id_expression);
  CHECK(!da->id_root && !db->id_root && !da->uri && !db->uri && !da->file_list && !db->file_list);
  const vf_cfg_dataset_component *ca[2] = {&da->vectors, &da->payload};
  const vf_cfg_dataset_component *cb[2] = {&db->vectors, &db->payload};
  for (int i = 0; i < 2; i++) {
    CHECK_EQ_INT(ca[i]->present, cb[i]->present);
    CHECK_EQ_INT(ca[i]->format, cb[i]->format);
    CHECK_EQ_INT(ca[i]->cache, cb[i]->cache);
    CHECK_EQ_INT(ca[i]->has_parts, cb[i]->has_parts);
    CHECK((ca[i]->path == NULL) == (cb[i]->path == NULL));
    if (ca[i]->path && cb[i]->path) CHECK_EQ_STR(ca[i]->path, cb[i]->path);
    CHECK(!ca[i]->columns && !cb[i]->columns && !ca[i]->fill_null_json && !cb[i]->fill_null_json);
  }
  CHECK_EQ_STR(db->vectors.path, path);
  CHECK_EQ_STR(b.vectorstore.path, a.vectorstore.path);
  CHECK_EQ_INT(a.vectorstore.on_disk_payload, b.vectorstore.on_disk_payload);
  CHECK_EQ_INT(a.loader.batch_size, b.loader.batch_size);
  CHECK_EQ_INT(a.loader.prefetch_size, b.loader.prefetch_size);
  size_t na = 0, nb = 0;
  vf_config_secret_paths(&a, &na);
  vf_config_secret_paths(&b, &nb);
  CHECK_EQ_INT(na, nb);
  vf_buf_free(&ja);
  vf_buf_free(&jb);
  vf_config_free(&a);
  vf_config_free(&b);
  vf_buf_free(&y);
}

VF_TEST(vector_file_configs_match_the_yaml_route) {
  same_config("/data/base.npy", VF_CFG_FORMAT_NPY, "/data/base.npy", NULL, CORPUS_COSINE);
  same_config("/data/base.fbin", VF_CFG_FORMAT_FBIN, "/data/base.fbin", NULL, CORPUS_COSINE);
  same_config("/data/glove.hdf5", VF_CFG_FORMAT_HDF5, "/data/glove.hdf5", NULL, CORPUS_EUCLID);
  same_config("/data/x.h5", VF_CFG_FORMAT_HDF5, "/data/x.h5", NULL, CORPUS_DOT);
}

VF_TEST(paths_the_yaml_route_had_to_escape) {
  same_config("it's $HOME.npy", VF_CFG_FORMAT_NPY, "/tmp/it's ${HOME} $$ dir/v.npy", NULL,
              CORPUS_COSINE);
  same_config("a: b # c.fbin", VF_CFG_FORMAT_FBIN, "/tmp/a: b # {c} [d], e.fbin", NULL,
              CORPUS_COSINE);
  same_config("\"q\".hdf5", VF_CFG_FORMAT_HDF5, "/tmp/\"q\" 'r'.hdf5", NULL, CORPUS_EUCLID);
}

VF_TEST(bundle_configs_match_the_yaml_route) {
  same_config("/b/it's", VF_CFG_FORMAT_NPY, "/b/it's/vectors.npy", "/b/it's/payloads.jsonl",
              CORPUS_COSINE);
  same_config("/b/$x", VF_CFG_FORMAT_NPY, "/b/$x/vectors.npy", NULL, CORPUS_COSINE);
}

VF_TEST(a_path_with_a_newline_needs_no_yaml) {
  /* the YAML route refused control characters; the direct config keeps the path as given */
  vf_config c;
  vf_error err;
  CHECK_OK(vf_config_vector_file("x", VF_CFG_FORMAT_NPY, "/tmp/a\nb.npy", NULL, CORPUS_COSINE, &c,
                                 &err));
  CHECK_EQ_STR(c.datasource.vectors.path, "/tmp/a\nb.npy");
  vf_config_free(&c);
}
