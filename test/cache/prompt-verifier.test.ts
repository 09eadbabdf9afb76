import { describe, expect, it } from 'vitest';
import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { verifyCandidate } from '../../src/cache/prompt-verifier.ts';

/** The verdict on `next` given a cached `cached`, both as the cache sees them. */
function verdict(cached: string, next: string): string {
  const v = verifyCandidate(canonicalPrompt(cached).tokens, canonicalPrompt(next).tokens);
  return v.ok ? 'ok' : v.reason;
}

describe('canonicalPrompt', () => {
  it('takes out what cannot change the answer', () => {
    const same = ['Where is the Eiffel tower?', 'where is the eiffel tower', '  Where   is the Eiffel Tower?!', 'WHERE IS THE EIFFEL TOWER?', 'Hi, can you tell me where the Eiffel tower is, please?'];
    const texts = same.slice(0, 4).map((text) => canonicalPrompt(text).text);
    expect(new Set(texts).size).toBe(1);
    expect(canonicalPrompt("What's the time? I'm late and won't wait.").text).toBe('what is the time i am late and will not wait');
    expect(canonicalPrompt('How do I boil an egg?').text).toBe(canonicalPrompt('how to boil an egg').text);
    expect(canonicalPrompt('"Explain recursion."').text).toBe(canonicalPrompt('Explain recursion').text);
    expect(canonicalPrompt(same[4] as string).tokens).toEqual(['where', 'the', 'eiffel', 'tower', 'is']);
  });

  it('keeps case where it may mean something, and code and quotes as written', () => {
    expect(canonicalPrompt('What is CO?').text).not.toBe(canonicalPrompt('What is Co?').text);
    expect(canonicalPrompt('What does ls -R do?').text).not.toBe(canonicalPrompt('What does ls -r do?').text);
    expect(canonicalPrompt('In Python, is True truthy?').text).not.toBe(canonicalPrompt('In Python, is true truthy?').text);
    expect(canonicalPrompt('Run `git log  --oneline` please').tokens).toEqual(['run', '`git log  --oneline`']);
    expect(canonicalPrompt('Translate "Hello, World" to French').tokens).toContain('"Hello, World"');
    // A greeting is courtesy only where a prompt starts.
    expect(canonicalPrompt('Translate hi to French').tokens).toContain('hi');
  });
});

describe('verifyCandidate', () => {
  it('accepts a moved phrase, a typo, an acronym and function words', () => {
    expect(verdict('In Rust, how do I read a file?', 'How do I read a file in Rust?')).toBe('ok');
    expect(verdict('Recommend a good book on gardening', 'Recomend a good book on gardenning')).toBe('ok');
    expect(verdict('What does the CEO of a startup do?', 'What does the chief executive officer of a startup do?')).toBe('ok');
    expect(verdict('Suggest some dinner ideas', 'Suggest dinner ideas')).toBe('ok');
  });

  it('rejects a swapped direction or order, whatever the words', () => {
    expect(verdict('Convert 10 miles to kilometres', 'Convert 10 kilometres to miles')).toBe('order');
    expect(verdict('Does Mars orbit the Sun?', 'Does the Sun orbit Mars?')).toBe('order');
    expect(verdict('Translate this from German into Dutch', 'Translate this from Dutch into German')).toBe('order');
  });

  it('rejects another content word: antonyms, time, entities, tone, negating prefixes', () => {
    expect(verdict('How do I zoom in on a map?', 'How do I zoom out on a map?')).toBe('content');
    expect(verdict('What were the top films last year?', 'What were the top films this year?')).toBe('content');
    expect(verdict('What is the population of Lyon?', 'What is the population of Lille?')).toBe('content');
    expect(verdict('Write a formal apology email', 'Write a casual apology email')).toBe('content');
    expect(verdict('Which berries are edible?', 'Which berries are inedible?')).toBe('content');
    expect(verdict('Is it safe to fly?', 'Is it unsafe to fly?')).toBe('content');
  });

  it('rejects a payload that differs: case, symbols, code', () => {
    expect(verdict('Match ^[a-z]+$ in JavaScript', 'Match ^[A-Z]+$ in JavaScript')).toBe('payload');
    expect(verdict('How many joules is 1 mJ?', 'How many joules is 1 MJ?')).toBe('payload');
    expect(verdict('Why does `x = 1` fail here?', 'Why does `x == 1` fail here?')).toBe('payload');
  });

  it('compares a long prompt to its last word, past any embedding window', () => {
    const report = 'The committee reviewed the budget for the new library wing in detail. '.repeat(80);
    expect(verdict(`${report} The proposal was approved. Summarize the decision.`, `${report} The proposal was rejected. Summarize the decision.`)).toBe('content');
    expect(verdict(`${report} Summarize the decision.`, `${report}  summarize the decision`)).toBe('ok');
  });

  it('rejects two long prompts that differ in many words without searching them for typos, and still explains a few typos in a long one', () => {
    const words = (offset: number) => Array.from({ length: 2000 }, (_, i) => `word${String.fromCharCode(97 + ((i + offset) % 26))}${'abcdefghij'[(i * 7 + offset) % 10]}`).join(' ');
    expect(verdict(words(0), words(1))).toBe('content');
    const report = 'The committee reviewed the budget for the new library wing in detail. '.repeat(40);
    expect(verdict(`${report} Summarize the decision of the committee.`, `${report} Sumarize the decison of the comittee.`)).toBe('ok');
  });
});

