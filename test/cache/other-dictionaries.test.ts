import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildOtherWordsModule, outputOf, SOURCES, wordsOf } from '../../scripts/build-other-words.ts';
import { hasDictionary, isWordOf } from '../../src/cache/other-dictionaries.ts';
import { verdict } from '../support/prompt-verdict.ts';

/** The word lists of French, Spanish, Italian, Portuguese, German, Dutch, Polish and Swedish, and the typos they let the verifier fold. */

describe('word lists of other languages', () => {
  it.each(SOURCES)('$name is the filter scripts/build-other-words.ts writes from its package', (source) => {
    expect(readFileSync(outputOf(source), 'utf8')).toBe(buildOtherWordsModule(source));
  });

  it.each(SOURCES)('$name knows every word it stores, and few that it does not', (source) => {
    const words = wordsOf(source);
    expect(words.length).toBeGreaterThan(100_000);
    expect(words.filter((word) => !isWordOf(source.language, word))).toEqual([]);
    // Reversed words are rarely words: the share found is about the filter's false positives (and palindromes).
    const reversed = words.slice(0, 20_000).map((word) => [...word].reverse().join(''));
    const known = new Set(words);
    const falsePositives = reversed.filter((word) => !known.has(word) && isWordOf(source.language, word)).length;
    expect(falsePositives / reversed.length).toBeLessThan(0.02);
  });

  it('reads words in any case and with or without accents, and no language without a list', () => {
    expect(isWordOf('fr', 'Réinitialiser')).toBe(true);
    expect(isWordOf('fr', 'reinitialiser')).toBe(true);
    expect(isWordOf('es', 'también')).toBe(true);
    expect(isWordOf('pt', 'coração')).toBe(true);
    expect(isWordOf('fr', 'sœur')).toBe(true);
    expect(isWordOf('es', 'delcarar')).toBe(false);
    expect(isWordOf('it', 'pnada')).toBe(false);
    for (const word of ['Vertrag', 'Rezept', 'Katze', 'Größe', 'Unterlagen'])
      expect(isWordOf('de', word), word).toBe(true);
    expect(isWordOf('de', 'Unterlagn')).toBe(false);
    expect(isWordOf('nl', 'marathon')).toBe(true);
    expect(isWordOf('pl', 'zębów')).toBe(true);
    expect(isWordOf('sv', 'lägenheten')).toBe(true);
    for (const language of ['tr', 'ru'] as const) expect(hasDictionary(language)).toBe(false);
    expect(isWordOf('tr', 'merhaba')).toBe(false);
  });

  it('knows a verb with its pronouns glued on in Spanish and Italian, and an Italian word ending in an accent', () => {
    for (const word of ['dame', 'dime', 'quedarme', 'jubilarse', 'dámelo', 'cómpralo'])
      expect(isWordOf('es', word), word).toBe(true);
    for (const word of ['dimmi', 'farlo', 'mangiarlo', 'perché', 'università'])
      expect(isWordOf('it', word), word).toBe(true);
    expect(isWordOf('es', 'delcararme')).toBe(false);
  });
});

describe('typos in other languages', () => {
  it('folds a misspelling that is no word of the language, by a slip of the finger', () => {
    expect(verdict('¿Cómo declarar el alquiler en la renta?', '¿Cómo delcarar el alquiler en la renta?')).toBe('ok');
    expect(verdict('Quanto mangia un panda al giorno?', 'Quanto mangia un pnada al giorno?')).toBe('ok');
    expect(verdict('Comment réinitialiser mon mot de passe ?', 'Comment réinitialsier mon mot de passe ?')).toBe('ok');
    expect(verdict('Como faço para declarar o aluguel?', 'Como faço para declrar o aluguel?')).toBe('ok');
    // French is typed on AZERTY: `q` for `a` is a neighbour there (not on QWERTY), `p` for `a` no slip anywhere.
    expect(verdict('Combien coûte une baguette à Paris ?', 'Combien coûte une bqguette à Paris ?')).toBe('ok');
    expect(verdict('Combien coûte une baguette à Paris ?', 'Combien coûte une bpguette à Paris ?')).toBe('content');
    expect(verdict('Wo finde ich die Unterlagen für die Steuer?', 'Wo finde ich die Unterlagn für die Steuer?')).toBe(
      'ok',
    );
    expect(verdict('Hoe train ik voor een marathon?', 'Hoe train ik voor een marathin?')).toBe('ok');
    // `medusa` is missing from the Italian list: Italian writes no compounds, so a slip of a word it lacks still folds.
    expect(verdict('Come si cura una puntura di medusa?', 'come si cura una puntura di medsua')).toBe('ok');
    // German is typed on QWERTZ: `z` and `u` are neighbours there.
    expect(verdict('Wie lange dauert die Anmeldung?', 'Wie lange dauert die Anmeldzng?')).toBe('ok');
  });

  it('never takes a real word for a typo of another, and has no typos in a language without a list', () => {
    expect(verdict('Le poisson est-il bon pour les chats ?', 'Le poison est-il bon pour les chats ?')).toBe('content');
    expect(verdict('Quanto custa uma cobra?', 'Quanto custa uma cabra?')).toBe('content');
    expect(verdict('¿Cuánto cuesta una casa en Madrid?', '¿Cuánto cuesta una cosa en Madrid?')).toBe('content');
    expect(verdict('Dame la receta de la paella', 'Dime la receta de la paella')).not.toBe('ok');
    expect(verdict('Wie lange muss Rind kochen?', 'Wie lange muss Rand kochen?')).not.toBe('ok');
    // Two forms the list lacks (a German compound may be one) are no typo of each other.
    expect(verdict('Was kostet ein Grafikkartenlüfterx?', 'Was kostet ein Grafikkartenlüftrex?')).not.toBe('ok');
    expect(
      verdict('İstanbul’da kiralık ev fiyatları ne kadar?', 'İstanbul’da kiralık ev fiyatlaır ne kadar?'),
    ).not.toBe('ok');
    // Only in place: a typo and a move together are two differences.
    expect(verdict('Quanto mangia un panda al giorno?', 'Un pnada quanto mangia al giorno?')).toBe('content');
  });
});
