import { describe, expect, it } from 'vitest';
import { guardSignatureOf, promptGuardsOf } from '../../src/cache/prompt-guards.ts';
import { verdict } from '../support/prompt-verdict.ts';

const same = (a: string, b: string) => guardSignatureOf(a) === guardSignatureOf(b);

describe('prompt guards', () => {
  it('extracts numbers in order, canonicalized, with number words', () => {
    expect(promptGuardsOf('Convert 1,000 km and 2.50 miles, then add five').numbers).toEqual(['1000', '2.5', '5']);
    expect(promptGuardsOf('Is 007 bigger than 7.0?').numbers).toEqual(['7', '7']);
  });

  it('tells prompts apart that differ only by a number', () => {
    expect(same('Convert 5 km to miles', 'Convert 50 km to miles')).toBe(false);
    expect(same('Is 3 greater than 5?', 'Is 5 greater than 3?')).toBe(false);
    expect(same('What is 2 + 2?', 'what is two + two')).toBe(true);
    expect(same('Population in 2020', 'population in 2,020')).toBe(true);
    expect(same("Which one's expected in Germany?", 'Which one is expected in Germany?')).toBe(true);
    expect(same("Which one's expected?", "Which two's expected?")).toBe(false);
  });

  it('tells prompts apart that differ by a quoted string, but ignores apostrophes', () => {
    expect(promptGuardsOf('Translate "good morning" and \'good night\' and `x = 1`').quotes).toEqual([
      'good morning',
      'good night',
      'x = 1',
    ]);
    expect(same('Translate "good morning" to French', 'Translate "good night" to French')).toBe(false);
    expect(same('Translate “good morning” to French', 'Please translate "good morning" into French')).toBe(true);
    expect(same('Was bedeutet „Mietpreisbremse“?', 'Was bedeutet «Mietpreisbremse»?')).toBe(true);
    expect(promptGuardsOf("Don't use Paris' river names, it's fine").quotes).toEqual([]);
  });

  it('leave a quoted word to the verifier, except a value, and read a quote in capitals in a prompt in capitals in lower case', () => {
    // One word in quotes marks the word: "hello" against "goodbye" is the verifier's to tell apart (a payload each).
    expect(promptGuardsOf('Translate "hello" and `x` to French').quotes).toEqual(['x']);
    expect(verdict('Translate "hello" to French', 'Translate "goodbye" to French')).toBe('payload');
    expect(verdict('Was bedeutet „Staffelmiete“ im Mietvertrag?', 'Was bedeutet Staffelmiete im Mietvertrag?')).toBe(
      'ok',
    );
    expect(verdict('What does "recieve" mean?', 'What does receive mean?')).toBe('payload');
    // After `:` or `=` the quotes make a string of what would be a boolean or a number.
    expect(
      same('What does this YAML value parse to: enabled: no', 'What does this YAML value parse to: enabled: "no"'),
    ).toBe(false);
    expect(same('Set mode = "fast"', 'Set mode = fast')).toBe(false);
    expect(same("WHAT DOES 'UNDER OFFER' MEAN ON A LISTING?", "What does 'under offer' mean on a listing?")).toBe(true);
    expect(same("What does 'UNDER OFFER' mean on a listing?", "What does 'under offer' mean on a listing?")).toBe(
      false,
    );
  });

  it('counts negations, contractions included', () => {
    expect(promptGuardsOf("I don't want fish, not meat, and never eggs").negations).toBe(3);
    expect(same('Is 7 a prime number?', 'Is 7 not a prime number?')).toBe(false);
    expect(same('Which fruits are not red?', "Which fruits aren't red?")).toBe(true);
    expect(same('Recipes with nuts', 'Recipes without nuts')).toBe(false);
    expect(same('Recipes w/ nuts', 'Recipes w/o nuts')).toBe(false);
    expect(same('Recipes w/o nuts', 'Recipes without nuts')).toBe(true);
    expect(same('why doesnt it stick', "why doesn't it stick")).toBe(true);
    expect(same('why does it stick', 'why doesnt it stick')).toBe(false);
  });

  it('lets plain paraphrases through', () => {
    expect(same('What is the capital of France?', 'Tell me the capital city of France')).toBe(true);
  });
});
