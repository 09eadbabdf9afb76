#!/usr/bin/env bash
# Installs PyPI's wordfreq (its word-frequency lists, data under CC BY-SA 4.0) in a venv under .tools/ (ignored by
# git) for scripts/build-other-words.ts, which builds the German, Dutch, Polish and Swedish word lists of the
# semantic cache from it, and for the test that checks them. Prints the venv's python; does nothing when it
# already imports wordfreq.
#   bash scripts/wordfreq-python.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.tools/wordfreq/venv"
PY="$VENV/bin/python"
ready() { [ -x "$PY" ] && "$PY" -c 'import wordfreq' >/dev/null 2>&1; }
ready && { echo "$PY"; exit 0; }
command -v python3 >/dev/null || { echo "wordfreq-python: no python3" >&2; exit 1; }
mkdir -p "$(dirname "$VENV")"
[ -x "$PY" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check wordfreq==3.1.1 >&2
ready || { echo "wordfreq-python: the venv does not import wordfreq" >&2; exit 1; }
echo "$PY"
