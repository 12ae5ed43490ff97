#!/bin/bash
# Starts the real services the tests use — once for the whole run — as children of this script,
# exports where they are, runs "$@", then stops them (kill + wait: the init process here does not
# reap orphans).  A service whose packages are missing is not started; its tests skip.
#   S3 (Ceph radosgw)      VF_S3_ENDPOINT, VF_S3_ACCESS_KEY, VF_S3_SECRET_KEY (test-only user)
#   HF stand-in (nginx)    VF_HF_ENDPOINT (http), VF_HF_ENDPOINT_TLS, VF_HF_CA (cert), VF_HF_ROOT
#   Slurm (single node)    SLURM_CONF, VF_SLURM=1
# VF_SERVICES=none|rgw,hf,slurm selects (default: all available).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${VF_SERVICES_DIR:-${TMPDIR:-/tmp}/vforge-services}
want=${VF_SERVICES:-rgw,hf,slurm}
mkdir -p "$work"
vf_retry() { for _ in $(seq 40); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "failed: $*" >&2; return 1; }
stop_all() {
  [ -n "${SLURM_CONF:-}" ] && command -v scancel >/dev/null && scancel --user="$(id -un)" 2>/dev/null
  for f in "$work"/slurm/slurm.pids "$work"/hf/hf.pids "$work"/ceph/rgw.pids; do
    [ -f "$f" ] || continue
    for p in $(tac "$f"); do kill "$p" 2>/dev/null; done
    for p in $(tac "$f"); do wait "$p" 2>/dev/null; done
    rm -f "$f"
  done
}
trap stop_all EXIT
trap 'exit 130' INT TERM
has() { case ",$want," in *",$1,"*) return 0;; esac; return 1; }
if has rgw && command -v radosgw >/dev/null && command -v ceph-mon >/dev/null; then
  if source "$here/rgw/up.sh" "$work/ceph" 7480; then
    export VF_S3_ENDPOINT=http://127.0.0.1:7480 VF_S3_ACCESS_KEY=AKTEST VF_S3_SECRET_KEY=SKTEST
  else echo "services: radosgw failed to start; S3 tests will skip" >&2; fi
fi
if has hf && command -v nginx >/dev/null; then
  if source "$here/hf/up.sh" "$work/hf"; then
    export VF_HF_ENDPOINT=http://127.0.0.1:8080 VF_HF_ENDPOINT_TLS=https://127.0.0.1:8443
    export VF_HF_CA="$work/hf/conf/cert.pem" VF_HF_ROOT="$work/hf"
  else echo "services: nginx failed to start; HF tests will skip" >&2; fi
fi
if has slurm && command -v slurmctld >/dev/null && command -v munged >/dev/null; then
  if source "$here/slurm/up.sh" "$work/slurm"; then export VF_SLURM=1
  else echo "services: slurm failed to start; Slurm tests will skip" >&2; unset SLURM_CONF; fi
fi
"$@"
