/*
 * source.c — the corpus a URI argument names (generate-queries, brute-force, brute-force-merge,
 * index build, the Python front end's open/read_vectors): a parquet corpus URI, a YAML load
 * config or a single vector file.
 *
 * A config gives its datasource's files through vf_config_files() (uri, file_list or a
 * `type: dataset` with parts), one `vectors:` entry (--column NAME among several) and the
 * id expression; every file is then read through corpus_records_open() with that spec, so a
 * dataset part pairs its vectors with its payload exactly as `load` does.  A single vector file
 * (.npy, .fbin/.u8bin/.i8bin, .hdf5/.h5 — its `train`) becomes a one-part dataset with
 * `id_expression: row` (point id = row number), the ids `load` stores for such a config and
 * that `bench` maps ann-benchmarks `neighbors` / big-ann ground truth to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/config.h"
#include "vforge/vecfile.h"

static bool ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcasecmp(s + n - m, suf) == 0;
}

static bool is_remote(const char *uri) {
  return strstr(uri, "://") != NULL && strncmp(uri, "file://", 7) != 0;
}

/* the vector-file format of a local path by its name; -1 when it names none */
static int vecfile_format(const char *uri) {
  if (is_remote(uri)) return -1;
  if (ends_with(uri, ".npy")) return VF_CFG_FORMAT_NPY;
  if (ends_with(uri, ".fbin") || ends_with(uri, ".u8bin") || ends_with(uri, ".i8bin"))
    return VF_CFG_FORMAT_FBIN;
  if (ends_with(uri, ".hdf5") || ends_with(uri, ".h5")) return VF_CFG_FORMAT_HDF5;
  return -1;
}

/* a one-part dataset config over the vector file `path` (format fmt) */
static vf_status vecfile_config(const char *path, vf_cfg_format fmt, vf_config *cfg, vf_error *err) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return vf_error_set(err, VF_ENOTFOUND, "%s: no such vector file", path);
  fclose(fp);
  /* an ann-benchmarks bundle names its metric; anything else defaults to cosine */
  corpus_distance dist = CORPUS_COSINE;
  if (fmt == VF_CFG_FORMAT_HDF5) {
    char *m = NULL;
    vf_error e2;
    if (hdf5_root_attr(path, "distance", &m, &e2) == VF_OK && m) {
      if (!strcmp(m, "euclidean") || !strcmp(m, "l2")) dist = CORPUS_EUCLID;
      else if (!strcmp(m, "dot") || !strcmp(m, "ip")) dist = CORPUS_DOT;
    }
    free(m);
  }
  return vf_config_vector_file(path, fmt, path, NULL, dist, cfg, err);
}

/* a one-part dataset config over an ann-filtering-benchmark bundle in `dir`: vectors.npy and,
 * when present, payloads.jsonl (point i = row i = line i, ids = row numbers as closest_ids are) */
static vf_status bundle_config(const char *uri, const char *dir, vf_config *cfg, vf_error *err) {
  vf_status st = VF_OK;
  vf_buf vp, pl;
  VF_BUF_INIT(&vp, VF_BUF_MAX_TEXT); /* a path */
  VF_BUF_INIT(&pl, VF_BUF_MAX_TEXT);
  VF_TRY(vf_buf_printf(&vp, err, "%s/vectors.npy", dir));
  VF_TRY(vf_buf_append(&vp, "", 1, err));
  VF_TRY(vf_buf_printf(&pl, err, "%s/payloads.jsonl", dir));
  VF_TRY(vf_buf_append(&pl, "", 1, err));
  FILE *fp = fopen((const char *)pl.data, "rb");
  if (fp) fclose(fp);
  VF_TRY(vf_config_vector_file(uri, VF_CFG_FORMAT_NPY, (const char *)vp.data,
                               fp ? (const char *)pl.data : NULL, CORPUS_COSINE, cfg, err));
out:
  vf_buf_free(&vp);
  vf_buf_free(&pl);
  return st;
}

/* The full record spec of a config (corpus_source_opts.all_vectors): every `vectors:` entry
 * and every payload field, as `load` reads them. */
static vf_status all_vectors_spec(corpus_source *out, const char *uri, vf_error *err) {
  const vf_config *cfg = &out->cfg;
  if (cfg->nvectors > 1000 || cfg->datasource.npayload_fields > 100000)
    return vf_error_set(err, VF_ECONFIG, "%s: too many vectors or payload fields", uri);
  out->vecs = vf_calloc(cfg->nvectors + 1, sizeof *out->vecs);
  out->pays = vf_calloc(cfg->datasource.npayload_fields + 1, sizeof *out->pays);
  if (!out->vecs || !out->pays) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 0; i < cfg->nvectors; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    if (!v->column && v->source != VF_CFG_COMPONENT_VECTORS)
      return vf_error_set(err, VF_ECONFIG, "%s:%d: vector '%s' needs a column", uri, v->line, v->name);
    out->vecs[i] = (corpus_vec_source){v->name, v->kind, vf_config_vector_distance(cfg, v),
                                       v->source == VF_CFG_COMPONENT_VECTORS ? NULL : v->column};
  }
  for (size_t i = 0; i < cfg->datasource.npayload_fields; i++)
    out->pays[i] = (corpus_payload_source){cfg->datasource.payload_fields[i].key,
                                           cfg->datasource.payload_fields[i].column};
  out->spec.vectors = out->vecs;
  out->spec.nvectors = (int)cfg->nvectors;
  out->spec.payload = out->pays;
  out->spec.npayload = (int)cfg->datasource.npayload_fields;
  return VF_OK;
}

/* corpus_source_open(): see config.h. */
vf_status corpus_source_open(const char *uri, const corpus_source_opts *opts, corpus_source *out,
                             vf_error *err) {
  memset(out, 0, sizeof *out);
  const char *id_root = opts ? opts->id_root : NULL;
  const char *column = opts ? opts->column : NULL;
  bool all = opts && opts->all_vectors;
  int fmt = vecfile_format(uri);
  bool yaml = !is_remote(uri) && (ends_with(uri, ".yaml") || ends_with(uri, ".yml"));
  char *bdir = NULL;
  vf_status st = fmt < 0 && !yaml ? corpus_bundle_dir(uri, &bdir, err) : VF_OK;
  if (st != VF_OK) return st;
  if (fmt < 0 && !yaml && !bdir) return corpus_discover(uri, id_root, &out->files, err);
  vf_config *cfg = &out->cfg;
  const vf_cfg_vector *v = NULL;
  VF_TRY(yaml ? vf_config_load(uri, cfg, err)
              : bdir ? bundle_config(uri, bdir, cfg, err)
                     : vecfile_config(uri, (vf_cfg_format)fmt, cfg, err));
  if (id_root && !cfg->datasource.id_root && !(cfg->datasource.id_root = vf_strdup(id_root)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  /* the vector: --column names a `vectors:` entry (for a vector file, the only one) */
  if (column && yaml) {
    v = vf_config_find_vector(cfg, column);
    if (!v) {
      vf_buf names;
      vf_buf_init(&names, 256);
      for (size_t i = 0; i < cfg->nvectors; i++)
        vf_buf_printf(&names, NULL, "%s%s", i ? ", " : "", cfg->vectors[i].name);
      vf_buf_append(&names, "", 1, NULL);
      st = vf_error_set(err, VF_EUSAGE, "%s: no vector '%s' in `vectors:` (it has: %s)", uri,
                        column, names.data ? (const char *)names.data : "");
      vf_buf_free(&names);
      goto out;
    }
  } else if (cfg->nvectors == 1 || all) {
    v = &cfg->vectors[0];
  } else {
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: %zu vectors in `vectors:`; choose one with --column NAME",
                         uri, cfg->nvectors));
  }
  if (!v->column && v->source != VF_CFG_COMPONENT_VECTORS)
    VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s:%d: vector '%s' needs a column", uri, v->line, v->name));
  corpus_distance dist = vf_config_vector_distance(cfg, v);
  out->vec = (corpus_vec_source){v->name, v->kind, dist,
                                 v->source == VF_CFG_COMPONENT_VECTORS ? NULL : v->column};
  out->distance = dist;
  out->has_distance = true;
  st = corpus_idexpr_parse(cfg->datasource.id_expression ? cfg->datasource.id_expression
                                                         : VF_CONFIG_DEFAULT_ID_EXPRESSION,
                           &out->id, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s: datasource.id_expression: ", uri);
    goto out;
  }
  out->id_text = cfg->datasource.id_expression ? cfg->datasource.id_expression
                                                : VF_CONFIG_DEFAULT_ID_EXPRESSION;
  out->spec = (corpus_record_spec){.vectors = &out->vec, .nvectors = 1, .id = out->id};
  out->records = true;
  if (all) {
    VF_TRY(all_vectors_spec(out, uri, err));
  } else { /* the payload keys (filters read them; the eval scans drop them otherwise) */
    size_t np = cfg->datasource.npayload_fields;
    if (np && np < 100000 && (out->pays = vf_calloc(np, sizeof *out->pays))) {
      for (size_t i = 0; i < np; i++)
        out->pays[i] = (corpus_payload_source){cfg->datasource.payload_fields[i].key,
                                               cfg->datasource.payload_fields[i].column};
      out->spec.payload = out->pays;
      out->spec.npayload = (int)np;
    } else if (np) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    }
  }
  VF_TRY(vf_config_files(cfg, &out->files, err));
  if (out->files.n == 0)
    VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: the datasource has no files", uri));
out:
  free(bdir);
  if (st != VF_OK) corpus_source_close(out);
  return st;
}

/* corpus_source_close(): see config.h. */
void corpus_source_close(corpus_source *c) {
  free(c->vecs);
  free(c->pays);
  corpus_files_free(&c->files);
  corpus_idexpr_free(c->id);
  vf_config_free(&c->cfg);
  memset(c, 0, sizeof *c);
}
