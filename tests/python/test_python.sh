#!/usr/bin/env bash
# The Python package (python/) under pytest: tests/python/test_*.py with $VF_PY (the pinned
# .venv), against the extension this build made (<build>/python/vforge, next to $VFORGE).
# Skips (77) when the venv, pytest/numpy/pyarrow or the extension are absent (an ASan build
# has no extension: a sanitized .so cannot load into an unsanitized python).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${VF_PY:-}
if [ -z "$py" ] || [ ! -x "$py" ]; then echo "skip: no venv python (VF_PY=$py)"; exit 77; fi
"$py" -c "import pytest, numpy, pyarrow" 2>/dev/null || { echo "skip: pytest/numpy/pyarrow missing in $py"; exit 77; }
build=$(cd "$(dirname "${VFORGE:?VFORGE is set by ctest}")" && pwd)
if ! ls "$build"/python/vforge/_vforge*.so >/dev/null 2>&1; then
  echo "skip: no Python extension in $build/python/vforge (configure found no Python headers, or a sanitized build)"
  exit 77
fi
export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
export VFORGE VF_SRC="${VF_SRC:-$(cd "$here/../.." && pwd)}"
tmp=${VF_TMP:-/tmp}/pytest.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$py" -m pytest -q -p no:cacheprovider --basetemp="$tmp" "$here" "$@"
rc=$?
# 5 = no test collected: a wrapper that ran nothing has failed
[ "$rc" -eq 5 ] && { echo "pytest collected no test"; exit 1; }
exit "$rc"
