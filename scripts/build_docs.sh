#!/usr/bin/env bash
# Build the documentation site into site/ and fail on any warning (broken link, bad reference,
# missing docstring target). Usage: scripts/build_docs.sh [extra mkdocs args]
# Uses $PYTHON (default: python on PATH) so that CI can point it at its virtualenv.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
export NO_MKDOCS_2_WARNING=1
export PYTHONPATH="${PWD}${PYTHONPATH:+:${PYTHONPATH}}"
exec "$PYTHON" -m mkdocs build --strict "$@"
