#!/usr/bin/env bash
# Build the HTML documentation (warnings are errors).
#
#   docs/build.sh [OUT_DIR] [sphinx-build options...]
#
# OUT_DIR (default docs/_build) receives the site in OUT_DIR/html and
# Sphinx's cache in OUT_DIR/doctrees; nothing else is written into the
# source tree (no bytecode either). Needs the docs extras, which the test
# extras include: pip install -e ".[docs]" (or ".[test]").
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$repo/docs/_build"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    out="$1"
    shift
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$repo"
export PYTHONDONTWRITEBYTECODE=1
exec "${PYTHON:-python3}" -m sphinx -W --keep-going -b html \
    -d "$out/doctrees" docs "$out/html" "$@"
