#!/usr/bin/env bash
# Build the HTML documentation into docs/_build/html (warnings are errors).
# Needs the docs extras: pip install -e ".[docs]"
set -euo pipefail
cd "$(dirname "$0")/.."
exec sphinx-build -W --keep-going -b html docs docs/_build/html "$@"
