"""Offline evaluation of the learned pair judge against the cache's rules on the tuning sets.

    python scripts/pair-judge-eval.py --candidates candidates.jsonl --model DIR [--threshold 0.9 ...]

`candidates.jsonl` comes from `scripts/pair-judge-candidates.ts` (what the first stage and the
verifier say of each pair). The judge is asked only where it could change the outcome and is
allowed to: the first stage proposed the stored prompt (guards agree, sizes within tolerance,
static similarity >= the retriever threshold), the verifier rejected it for a different content
word (`content`: never `payload` (numbers, code, quotes, case) or `order` (direction, roles), which
stay rejections), both prompts are English, and both fit the judge's input (`--max-len` tokens).
A hit is then: the rules' hit, or the judge's probability >= the threshold and the second-stage
similarity >= the cache's threshold. Prints, per threshold, the wrong hits per near-miss class
(worst class share), the rewordings that hit and the other paraphrases gained, and the judge's
CPU time per pair (onnxruntime, one thread, int8).
"""

import argparse
import collections
import json
import os
import time

import numpy as np
import onnxruntime as ort
from transformers import AutoTokenizer

REWORDINGS = {'p_rewording', 'p_reformulation'}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--candidates', required=True)
    parser.add_argument('--model', required=True)
    parser.add_argument('--file', default='model_quantized.onnx')
    parser.add_argument('--max-len', type=int, default=64)
    parser.add_argument('--similarity', type=float, default=0.75, help="the cache's second-stage threshold")
    parser.add_argument('--threshold', type=float, nargs='*', default=[0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995])
    parser.add_argument('--dump', help='write each judged pair with its probability here')
    args = parser.parse_args()

    rows = [json.loads(line) for line in open(args.candidates, encoding='utf-8')]
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(args.model, args.file), options, providers=['CPUExecutionProvider'])

    judged = []
    cpu = 0.0
    for row in rows:
        row['rules'] = row['exact'] or (row['guardsAgree'] and row['sizeOk'] and row['proposed'] and row['verified'] and row['similarity'] >= args.similarity)
        eligible = not row['exact'] and row['guardsAgree'] and row['sizeOk'] and row['proposed'] and row['reason'] == 'content' and row['english']
        a, b = ' '.join(row['tokensA']), ' '.join(row['tokensB'])
        if eligible and len(tokenizer(a, b)['input_ids']) > args.max_len:
            eligible = False
            row['tooLong'] = True
        row['eligible'] = eligible
        if not eligible:
            continue
        started = time.process_time()
        # One input per lookup and candidate, as the gateway would run it: both orders, averaged.
        enc = tokenizer([a, b], [b, a], truncation=True, max_length=args.max_len, padding=True, return_tensors='np')
        logits = session.run(['logits'], {k: enc[k].astype(np.int64) for k in ('input_ids', 'attention_mask', 'token_type_ids')})[0].reshape(-1)
        cpu += time.process_time() - started
        row['probability'] = float(np.mean(1 / (1 + np.exp(-logits))))
        judged.append(row)

    near = collections.Counter(r['category'] for r in rows if r['label'] == 'near_miss')
    rewordings = [r for r in rows if r['category'] in REWORDINGS]
    others = [r for r in rows if r['label'] == 'paraphrase' and r['category'] not in REWORDINGS]
    print(f'{len(rows)} pairs; judged {len(judged)} ({sum(r["label"] == "near_miss" for r in judged)} near misses, '
          f'{sum(r["category"] in REWORDINGS for r in judged)} rewordings); judge cpu {1000 * cpu / max(1, len(judged)):.1f} ms per pair (both orders)')
    print(f'rules alone: wrong hits {sum(r["rules"] for r in rows if r["label"] == "near_miss")}, rewordings {sum(r["rules"] for r in rewordings)}/{len(rewordings)}, '
          f'other paraphrases {sum(r["rules"] for r in others)}/{len(others)}')
    for t in args.threshold:
        wrong = collections.Counter()
        for r in judged:
            if r['label'] == 'near_miss' and r['probability'] >= t and r['similarity'] >= args.similarity:
                wrong[r['category']] += 1
        hit = lambda r: r['rules'] or (r.get('probability', 0) >= t and r['similarity'] >= args.similarity)
        share, worst = max(((wrong[c] / near[c], c) for c in near), default=(0, '-'))
        print(f'threshold {t}: wrong hits {sum(wrong.values())}/{sum(near.values())}, worst class {worst} {wrong[worst]}/{near[worst]} = {100 * share:.1f} %; '
              f'rewordings {sum(hit(r) for r in rewordings)}/{len(rewordings)}; other paraphrases {sum(hit(r) for r in others)}/{len(others)}; '
              f'by class {dict(wrong)}')
    if args.dump:
        with open(args.dump, 'w', encoding='utf-8') as f:
            for r in sorted(judged, key=lambda r: -r['probability']):
                f.write(json.dumps({k: r[k] for k in ('id', 'category', 'label', 'a', 'b', 'similarity', 'probability')}) + '\n')


if __name__ == '__main__':
    main()
