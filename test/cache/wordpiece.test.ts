import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WordPieceTokenizer } from '../../src/cache/embedders/wordpiece.ts';
import { readPairSet } from '../../eval/semantic/pair-set.ts';
import { MINILM, SHARED_MODELS, tokenizerPresent } from '../support/tiny-onnx-model.ts';

/** The hand-written WordPiece tokenizer gives transformers.js' ids for the model's own tokenizer files. */
describe.runIf(tokenizerPresent())('WordPiece tokenizer', () => {
  it('matches transformers.js on every prompt of the dev pair set and on accents, CJK, punctuation and long words', async () => {
    const transformers = await import('@huggingface/transformers');
    transformers.env.localModelPath = `${SHARED_MODELS}/`;
    transformers.env.allowRemoteModels = false;
    const reference = await transformers.AutoTokenizer.from_pretrained(MINILM);
    const lines = readFileSync(join(SHARED_MODELS, MINILM, 'vocab.txt'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    const tokenizer = new WordPieceTokenizer(lines);
    const texts = [
      ...readPairSet('dev').flatMap((pair) => [pair.a, pair.b]),
      'Café déjà vu — naïve résumé… 東京で「ラーメン」を食べたい!',
      `snake_case, kebab-case & "quotes" ${'x'.repeat(120)} tabs\tand\nnewlines\u0000 `,
    ];
    for (const text of texts) expect(tokenizer.encode(text)).toEqual((reference.encode(text) as number[]).slice(1, -1));
  });
});
