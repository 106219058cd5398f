#!/usr/bin/env bash
# Build the documentation site into site/ and fail on any warning (broken link, bad reference,
# missing docstring target). Usage: scripts/build_docs.sh [extra mkdocs args]
# Runs as is, no virtualenv activated: $PYTHON if set, else the checkout's .venv/bin/python if
# present, else python3 on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export NO_MKDOCS_2_WARNING=1
export PYTHONPATH="${PWD}${PYTHONPATH:+:${PYTHONPATH}}"
exec "$PYTHON" -m mkdocs build --strict "$@"
