"""Distills a static token-embedding table from sentence-transformers
all-MiniLM-L6-v2 (model2vec-style): every WordPiece token of the vocabulary
goes through the transformer once, alone ([CLS] token [SEP], mean-pooled as
the sentence model pools), the vectors are reduced by PCA and weighted by an
estimate of the token's rarity (SIF: a / (a + p), p from the vocabulary's
frequency order). A text's static embedding is then the normalized sum of
its tokens' rows: microseconds per prompt instead of a transformer pass.

The gateway's semantic cache uses it as its first-stage retriever and runs
the transformer only on prompts that have a first-stage candidate.

  python distill-static-embeddings.py <model-source-dir> <out-dir> [dims]

Writes <out>/Xenova/all-MiniLM-L6-v2/static/embeddings.f32 (rows in vocab.txt
order, little-endian float32) and static.json ({dims, rows})."""
import json
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import BertModel

source, out = Path(sys.argv[1]), Path(sys.argv[2])
dims = int(sys.argv[3]) if len(sys.argv) > 3 else 256
target = out / 'Xenova' / 'all-MiniLM-L6-v2' / 'static'
target.mkdir(parents=True, exist_ok=True)

vocab = (source / 'vocab.txt').read_text(encoding='utf-8').split('\n')
if vocab and vocab[-1] == '':
    vocab.pop()
cls, sep = vocab.index('[CLS]'), vocab.index('[SEP]')
torch.set_num_threads(1)
model = BertModel.from_pretrained(str(source)).eval()

rows = np.zeros((len(vocab), model.config.hidden_size), dtype=np.float32)
with torch.inference_mode():
    for start in range(0, len(vocab), 512):
        ids = torch.arange(start, min(start + 512, len(vocab)))
        batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
        hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch), token_type_ids=torch.zeros_like(batch)).last_hidden_state
        rows[start:start + len(ids)] = hidden.mean(dim=1).numpy()

# PCA over the real tokens (not [PAD], [unused…] or the other specials).
real = np.array([not (t.startswith('[') and t.endswith(']')) for t in vocab])
mean = rows[real].mean(axis=0)
_, _, vt = np.linalg.svd(rows[real] - mean, full_matrices=False)
reduced = (rows - mean) @ vt[:dims].T

# SIF weights from a Zipf estimate of each token's frequency: BERT's vocabulary
# lists whole words roughly by frequency after the single characters.
rank = np.arange(len(vocab), dtype=np.float64) + 1
p = 1.0 / (rank * np.log(1.78 * len(vocab)))
weights = 1e-3 / (1e-3 + p)
reduced = reduced * weights[:, None]
reduced[~real] = 0
reduced.astype('<f4').tofile(target / 'embeddings.f32')
(target / 'static.json').write_text(json.dumps({'dims': dims, 'rows': len(vocab)}))
print(f'distilled {len(vocab)} x {dims} into {target}')
