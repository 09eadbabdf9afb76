import { describe, expect, it } from 'vitest';
import { foldOtherLanguage, withoutAccents } from '../../src/cache/prompt-other-languages.ts';
import { verdict } from '../support/prompt-verdict.ts';

describe('prompts in other languages', () => {
  it('reads the chat shorthand of the prompt’s own language, and only of it', () => {
    expect(foldOtherLanguage('pt', ['vc', 'sabe', 'pra', 'que'], false, false)).toEqual([
      'você',
      'sabe',
      'para',
      'que',
    ]);
    expect(foldOtherLanguage('fr', ['vc', 'sabe'], false, false)).toEqual(['vc', 'sabe']);
    expect(
      verdict(
        'Você sabe quanto tempo leva para uma galinha chocar?',
        'vc sabe quanto tempo leva pra uma galinha chocar',
      ),
    ).toBe('ok');
    expect(verdict('Il y a beaucoup de neige à Lyon ?', 'il y a bcp de neige a lyon')).toBe('ok');
  });

  it('takes off accents and spells out umlauts and ß for a prompt typed without them', () => {
    expect(withoutAccents('Straße')).toBe('Strasse');
    expect(
      verdict(
        'Wie heiß muss das Wasser sein, um Bettwäsche zu waschen?',
        'Wie heiss muss das Wasser sein, um Bettwaesche zu waschen?',
      ),
    ).toBe('ok');
    // Both write umlauts: `wurde` (was) and `würde` (would) stay apart.
    expect(
      verdict('Wie alt wurde Goethe in Weimar, über achtzig?', 'Wie alt würde Goethe in Weimar, über achtzig?'),
    ).not.toBe('ok');
  });

  it('joins a compound written apart or hyphenated, but not two English words', () => {
    expect(
      verdict(
        'Hoeveel uur mag een scholier werken in de zomervakantie?',
        'hoeveel uur mag een scholier werken in de zomer vakantie?',
      ),
    ).toBe('ok');
    expect(verdict('Why does my laptop keep dropping the wifi?', 'Why does my laptop keep dropping the wi-fi?')).toBe(
      'ok',
    );
    expect(verdict('What should I wear everyday?', 'What should I wear every day?')).not.toBe('ok');
  });

  it('folds a common word that is part of a name the case-blind prompt writes whole, not one on its own', () => {
    expect(
      verdict("What's the best way to farm runes in Elden Ring?", 'whats the best way to farm runes in elden ring'),
    ).toBe('ok');
    expect(verdict('Where can I buy a Ring doorbell?', 'where can i buy a ring doorbell')).not.toBe('ok');
  });

  it('tells French and Spanish apart by their commonest words', () => {
    expect(
      verdict(
        'Bonjour, comment déclarer un arrêt de travail quand on est auxiliaire de vie ? Merci',
        'Comment déclarer un arrêt de travail quand on est auxiliaire de vie ?',
      ),
    ).toBe('ok');
    expect(
      verdict(
        'Hola buenas, ¿a qué temperatura se debe guardar la insulina ya abierta?',
        '¿A qué temperatura se debe guardar la insulina ya abierta?',
      ),
    ).toBe('ok');
  });
});
