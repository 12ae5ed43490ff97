/*
 * load_admin.c — `vforge load reindex` and `vforge load delete` (issue 18): collection
 * administration from a load config, without reading the corpus.
 *
 * Why no corpus: both act on an existing collection (patch its index settings / drop it), so the
 * vector dimensions the runner probes from the files are not needed; a store handle opened here
 * never creates or verifies a collection.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vforge/load.h"
#include "vforge/store.h"

/* A store config from the config alone (placeholder dimensions: nothing is created). */
static vf_status admin_open(const vf_config *cfg, store **out, vf_error *err) {
  *out = NULL;
  if (!cfg->vectorstore.collection_name || !cfg->vectorstore.collection_name[0])
    return vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name is required",
                        cfg->name ? cfg->name : "config");
  size_t nv = cfg->nvectors;
  store_vector_spec *vs = vf_calloc(nv + 1, sizeof *vs);
  const char **vp = vf_calloc(nv + 1, sizeof *vp);
  if (!vs || !vp) {
    free(vs);
    free(vp);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < nv; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    vs[i].name = v->name;
    vs[i].kind = v->kind;
    vs[i].distance = vf_config_vector_distance(cfg, v);
    vs[i].dim = v->kind == CORPUS_VEC_SPARSE ? 0 : 1;
    vp[i] = v->params_json;
  }
  store_config sc;
  store_config_from(cfg, &sc);
  sc.recreate = false;
  sc.vectors = vs;
  sc.nvectors = (int)nv;
  sc.vector_params_json = vp;
  vf_status st = store_open(&sc, out, err);
  free(vs);
  free(vp);
  return st;
}

/* ld_reindex(): see load.h. */
vf_status ld_reindex(const vf_config *cfg, const ld_options *o, vf_error *err) {
  if (cfg->vectorstore.type != VF_CFG_STORE_QDRANT)
    return vf_error_set(err, VF_EUSAGE, "%s: load reindex applies to vectorstore type qdrant "
                        "(the local store builds its index at load finalize)", cfg->name);
  store *s = NULL;
  vf_status st = VF_OK;
  VF_TRY(admin_open(cfg, &s, err));
  VF_TRY(store_qdrant_reindex(s, o->wait_timeout_s, err));
out:
  store_close(s);
  return st;
}

/* Remove the load states of a dropped collection (a later --resume must not skip files whose
 * points are gone). */
static vf_status drop_states(const vf_config *cfg, const ld_options *o, vf_error *err) {
  char *one = NULL;
  vf_status st = ld_state_path(cfg, o, &one, err);
  if (st != VF_OK) return st;
  char *slash = strrchr(one, '/');
  if (slash) *slash = 0;
  DIR *d = opendir(one);
  if (!d) {
    free(one);
    return VF_OK;
  }
  struct dirent *de;
  size_t removed = 0;
  char *p = NULL;
  while ((de = readdir(d)) != NULL) {
    const char *n = de->d_name;
    size_t l = strlen(n);
    bool state = (strncmp(n, "rank", 4) == 0 && strstr(n, "-of-") && l > 5 &&
                  strcmp(n + l - 5, ".json") == 0) ||
                 strcmp(n, "prepare.json") == 0;
    if (!state) continue;
    size_t pl = strlen(one) + l + 2;
    p = vf_malloc(pl);
    if (!p) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    snprintf(p, pl, "%s/%s", one, n);
    if (unlink(p) != 0)
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot remove the load state: %s", p, VF_STRERROR(errno)));
    removed++;
    free(p);
    p = NULL;
  }
  if (removed)
    vf_log(VF_LOG_INFO, "removed %zu load state file%s in %s", removed, removed == 1 ? "" : "s",
           one);
out:
  free(p);
  closedir(d);
  rmdir(one); /* only when empty */
  free(one);
  return st;
}

/* ld_delete(): see load.h. */
vf_status ld_delete(const vf_config *cfg, const ld_options *o, bool yes, ld_drop_report *rep,
                    vf_error *err) {
  memset(rep, 0, sizeof *rep);
  store *s = NULL;
  store_collection_info info;
  vf_status st = VF_OK;
  VF_TRY(admin_open(cfg, &s, err));
  VF_TRY(store_describe_collection(s, &info, err));
  rep->existed = info.exists;
  rep->points = info.points;
  snprintf(rep->where, sizeof rep->where, "%s", info.where);
  if (!info.exists) {
    vf_log(VF_LOG_INFO, "collection '%s' does not exist at %s: nothing to drop",
           cfg->vectorstore.collection_name, info.where);
  } else if (!yes) {
    VF_FAIL(vf_error_set(err, VF_EUSAGE,
                         "load delete would drop collection '%s' at %s (%llu points%s%s) and its "
                         "load states; pass --yes to drop it",
                         cfg->vectorstore.collection_name, info.where,
                         (unsigned long long)info.points, info.status[0] ? ", status " : "",
                         info.status));
  } else {
    VF_TRY(store_drop_collection(s, err));
    rep->dropped = true;
  }
  store_close(s);
  s = NULL;
  if (yes) VF_TRY(drop_states(cfg, o, err));
out:
  store_close(s);
  return st;
}
