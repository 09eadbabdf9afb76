import { describe, expect, it } from 'vitest';
import { foldOtherLanguage, withoutAccents } from '../../src/cache/prompt-other-languages.ts';
import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { verifyCandidate } from '../../src/cache/prompt-verifier.ts';
import { verdict } from '../support/prompt-verdict.ts';

describe('prompts in other languages', () => {
  it('lets two prompts in another language differ in case, whitespace, punctuation and courtesy only', () => {
    expect(verdict('Quelle est la capitale du Canada ?', 'quelle est la capitale du canada')).toBe('ok');
    expect(verdict('Wie koche ich Spargel?', 'wie koche ich spargel')).toBe('ok');
    expect(verdict('Le poisson est-il bon pour les chats ?', 'Le poison est-il bon pour les chats ?')).toBe('content');
    expect(verdict('Quanto custa uma cobra?', 'Quanto custa uma cabra?')).toBe('content');
    expect(verdict('Comment convertir des euros en dollars ?', 'Comment convertir des dollars en euros ?')).toBe(
      'content',
    );
    // Greetings, thanks and "please" of the prompt's own language come off; a request's lead-in does not.
    expect(verdict('Quelle heure est-il à Tokyo ?', "Quelle heure est-il à Tokyo, s'il vous plaît ?")).toBe('ok');
    expect(verdict('Hallo, wie setzt man einen Sauerteig an? Danke!', 'Wie setzt man einen Sauerteig an?')).toBe('ok');
    expect(verdict('Bedankt alvast: hoe lang is een rijbewijs geldig?', 'Hoe lang is een rijbewijs geldig?')).toBe(
      'ok',
    );
    expect(verdict('Per favore, mi spieghi come funziona il voto?', 'Come funziona il voto?')).toBe('content');
    expect(verdict('请问，北京的地铁几点停运？', '北京的地铁几点停运')).toBe('ok');
    expect(verdict('東京駅から浅草までの行き方を教えてください。', '東京駅から浅草までの行き方を教えて')).toBe('ok');
    // No other language's courtesy: "merci" in a German prompt is a word.
    expect(verdict('Wie sagt man merci auf Deutsch?', 'Wie sagt man auf Deutsch?')).not.toBe('ok');
  });

  it('lets a prompt typed without any accent match one with them, but not two that both write accents', () => {
    expect(verdict('¿Cuál es el horario del Museo del Prado?', 'cual es el horario del museo del prado')).toBe('ok');
    expect(verdict('Jak długo gotować jajko na miękko?', 'jak dlugo gotowac jajko na miekko')).toBe('ok');
    expect(
      verdict("İstanbul'da toplu taşıma kartı nereden alınır?", 'istanbulda toplu tasima karti nereden alinir'),
    ).toBe('ok');
    expect(verdict('Quel est le meilleur café de Paris ?', 'Quel est le meilleur cafe de Paris ?')).toBe('ok');
    expect(verdict('¿Qué edad tiene el papá de Messi?', '¿Qué edad tiene el papa de Messi?')).toBe('content');
    expect(verdict('Em que ano nasceu o meu avô?', 'Em que ano nasceu a minha avó?')).toBe('content');
  });

  it('reads the chat shorthand of the prompt’s own language, and only of it', () => {
    // Written out as the writer would have: with accents where they type any, else without.
    expect(foldOtherLanguage('pt', ['vc', 'sabe', 'pra', 'que'], false, false)).toEqual([
      'voce',
      'sabe',
      'para',
      'que',
    ]);
    expect(foldOtherLanguage('pt', ['vc', 'está', 'aí'], false, false)).toEqual(['você', 'está', 'aí']);
    expect(foldOtherLanguage('fr', ['vc', 'sabe'], false, false)).toEqual(['vc', 'sabe']);
    expect(
      verdict(
        'Você sabe quanto tempo leva para uma galinha chocar?',
        'vc sabe quanto tempo leva pra uma galinha chocar',
      ),
    ).toBe('ok');
    expect(verdict('Il y a beaucoup de neige à Lyon ?', 'il y a bcp de neige a lyon')).toBe('ok');
    expect(
      verdict('Qual è il modo migliore per stirare una camicia?', 'qual e il modo migliore x stirare una camicia'),
    ).toBe('ok');
    // Turkish chat drops the `r` of the present tense; `radyo` keeps its ending.
    expect(verdict('Bebeğim neden sürekli ağlıyor?', 'bebegim neden surekli agliyo')).toBe('ok');
    expect(verdict('Kahveyi nasıl öğütüyorum?', 'kahveyi nasil ogutuyom')).toBe('ok');
    expect(foldOtherLanguage('tr', ['radyo', 'dinliyo'], false, false)).toEqual(['radyo', 'dinliyor']);
    // A name a case-blind prompt writes without its accents is the name.
    expect(verdict('Quanto custa o metrô de São Paulo?', 'quanto custa o metro de sao paulo')).toBe('ok');
    // Shorthand that is the first word of what it stands for is not read where that follows: `c'est` stays `c est`.
    expect(foldOtherLanguage('fr', ['c', 'quoi'], false, false)).toEqual(['c', 'est', 'quoi']);
    expect(foldOtherLanguage('fr', ['c', 'est', 'quoi'], false, false)).toEqual(['c', 'est', 'quoi']);
    expect(
      verdict(
        "Salut, c'est quoi la différence entre un CDD et un CDI, s'il te plaît ?",
        'slt c quoi la diff entre un CDD et un CDI stp',
      ),
    ).toBe('ok');
  });

  it('takes off chat courtesy: shortened thanks and greetings, and English thanks and please typed in another language', () => {
    expect(verdict('Você sabe como pedir reembolso? Obrigado!', 'oi vc sabe como pedir reembolso? obg')).toBe('ok');
    expect(verdict('이력서에 사진 꼭 넣어야 하나요? 감사합니다', '이력서에 사진 꼭 넣어야 하나요 ㄳ')).toBe('ok');
    expect(
      verdict('Wie lange hält sich Sauerteig im Kühlschrank?', 'wie lange hält sich sauerteig im kühlschrank thx'),
    ).toBe('ok');
    expect(
      verdict(
        'Ciao, quanto tempo ci vuole per cuocere la pasta al dente?',
        'quanto tempo ci vuole per cuocere la pasta al dente grz',
      ),
    ).toBe('ok');
    // Still only courtesy: a request's lead-in stays a difference.
    expect(verdict('Wie lange hält sich Sauerteig?', 'pls sag mir wie lange sich Sauerteig hält')).not.toBe('ok');
  });

  it('takes off the accents of a dead key when the other prompt types only the letters of one key', () => {
    // `ñ` is a key of its own on a Spanish keyboard, `á` takes two; `é` is one key on a French one, `ê` two.
    expect(
      verdict('¿Cuántas horas debe dormir un niño de 2 años?', 'cuantas horas debe dormir un niño de 2 años'),
    ).toBe('ok');
    expect(verdict('Combien de temps pour être remboursé ?', 'combien de temps pour etre remboursé')).toBe('ok');
    // Both type a dead key: `papá` and `papa` stay apart; `ù` is one key on a French keyboard, so `où` is not `ou`.
    expect(verdict('¿Qué edad tiene el papá de la niña?', '¿Qué edad tiene el papa de la niña?')).toBe('content');
    expect(verdict('Tu préfères le thé ou le café ?', 'Tu préfères le thé où le café ?')).toBe('content');
  });

  it('reads Dutch mn and zn, French cest and diff, the Korean copula in either spelling, and a shop name in any case', () => {
    expect(verdict('Hoe vaak moet ik mijn kat laten vaccineren?', 'hoe vaak moet ik mn kat laten vaccineren')).toBe(
      'ok',
    );
    expect(verdict('Hoe vaak moet ik mijn kat laten vaccineren?', 'hoe vaak moet ik zn kat laten vaccineren')).toBe(
      'content',
    );
    expect(
      verdict(
        "C'est quoi la différence entre un détartrage et un blanchiment ?",
        'cest quoi la diff entre un détartrage et un blanchiment',
      ),
    ).toBe('ok');
    expect(verdict('강아지 입양할 때 필요한 서류가 뭐예요?', '강아지 입양할 때 필요한 서류가 뭐에요?')).toBe('ok');
    // The English capitonyms (`Amazon` / `amazon`) are English words: a French prompt's `amazon` is the shop.
    expect(verdict('Combien de temps pour un retour sur Amazon ?', 'combien de temps pour un retour sur amazon')).toBe(
      'ok',
    );
    expect(verdict('How long is the Amazon?', 'how long is the amazon')).not.toBe('ok');
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

  it('folds Swedish and Russian courtesy, greetings typed with a held letter, and spoken elisions', () => {
    expect(
      verdict('Hej! Hur lång tid tar det att få ett pass? Tack på förhand', 'Hur lång tid tar det att få ett pass?'),
    ).toBe('ok');
    expect(verdict('Здравствуйте! Сколько стоит билет до Москвы? Спасибо', 'Сколько стоит билет до Москвы?')).toBe(
      'ok',
    );
    expect(verdict('Сколько стоит билет до Москвы?', 'Сколько стоит билет до Казани?')).not.toBe('ok');
    expect(verdict('Holaa, ¿cómo cambio mi contraseña?', '¿Cómo cambio mi contraseña?')).toBe('ok');
    expect(verdict('Merciii, comment changer mon mot de passe ?', 'Comment changer mon mot de passe ?')).toBe('ok');
    expect(verdict("t'as une idée pour enlever le calcaire ?", 'Tu as une idée pour enlever le calcaire ?')).toBe('ok');
    expect(verdict("Wat zet ik in m'n brief?", 'Wat zet ik in mijn brief?')).toBe('ok');
    expect(verdict("Wat zet ik in z'n brief?", 'Wat zet ik in mijn brief?')).toBe('content');
    // The accent of what shorthand stands for is not the writer's: `vc` with no accent typed matches `você`.
    expect(verdict('Você sabe quanto dura a vacina antirrábica?', 'vc sabe quanto dura a vacina antirrabica?')).toBe(
      'ok',
    );
    expect(verdict('Você pode me explicar o que é franquia?', 'vc pode me explicar o que é franquia?')).toBe('ok');
    // German writes the nouns of its courtesy with capitals; Russian mostly writes `ё` as `е`; Italian `gg` is `giorni`.
    expect(
      verdict('Hallo! Wie entlüfte ich einen Heizkörper? Danke im Voraus!', 'Wie entlüfte ich einen Heizkörper?'),
    ).toBe('ok');
    expect(verdict('Как объяснить ребёнку, почему нельзя бить?', 'как объяснить ребенку почему нельзя бить')).toBe(
      'ok',
    );
    expect(verdict('Quanti giorni prima si fa il check-in?', 'quanti gg prima si fa il check-in?')).toBe('ok');
    // Two greetings, the second glued to the question; Korean crying in letters; Russian `спс`; a model code in lower case.
    expect(verdict('你好，请问猫可以吃香蕉吗？', '猫可以吃香蕉吗')).toBe('ok');
    // `请问` ("may I ask") before a question that follows a sentence.
    expect(verdict('我是三年级的老师，请问怎么布置作业？', '我是三年级的老师,怎么布置作业?')).toBe('ok');
    expect(
      verdict(
        '갤럭시 S24 배터리가 너무 빨리 닳는데 어떻게 해야 하나요?',
        '갤럭시 s24 배터리가 너무 빨리 닳는데 어떻게 해야 하나요ㅠㅠ',
      ),
    ).toBe('ok');
    expect(
      verdict('Как перенести контакты с Android на iPhone? Спасибо!', 'как перенести контакты с android на iphone спс'),
    ).toBe('ok');
    // A hyphenated word against its parts; a Korean compound written apart.
    expect(
      verdict('Combien de temps faut-il laisser reposer la pâte ?', 'combien de temps faut il laisser reposer la pate'),
    ).toBe('ok');
    expect(verdict('연말정산 의료비 공제 받으려면 뭐가 필요해요?', '연말정산 의료비공제 받으려면 뭐가 필요해요')).toBe(
      'ok',
    );
    expect(
      verdict('연말정산 의료비 공제 받으려면 뭐가 필요해요?', '연말정산 의료비 환급 받으려면 뭐가 필요해요'),
    ).not.toBe('ok');
  });

  it('reads quotes of any typography alike, and a quoted word as the word where the other prompt writes it bare', () => {
    expect(verdict('Was bedeutet „Staffelmiete“ im Mietvertrag?', 'Was bedeutet Staffelmiete im Mietvertrag??')).toBe(
      'ok',
    );
    expect(
      verdict(
        'Mi traduci in inglese: «Siamo spiacenti per il disagio»?',
        'Mi traduci in inglese: "Siamo spiacenti per il disagio" grazie',
      ),
    ).toBe('ok');
    expect(verdict('Was bedeutet „Staffelmiete“?', 'Was bedeutet „Indexmiete“?')).toBe('payload');
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
  it('writes ß as ss and an elided word as a word of its own', () => {
    expect(
      verdict(
        'Welche Größe sollte ein Fußball für die F-Jugend haben?',
        'Welche Grösse sollte ein Fussball für die F-Jugend haben?',
      ),
    ).toBe('ok');
    expect(
      verdict('Welche Größe hat ein Fußball für die F-Jugend?', 'Welche Grösse hat ein Fussball für die F-Jugend?'),
    ).toBe('ok');
    expect(verdict('Quanto dura il modello 730 durante l’anno?', 'quanto dura il modello 730 durante l anno')).toBe(
      'ok',
    );
    expect(verdict('Qual è la differenza tra olio e acrilico?', "Qual'è la differenza tra olio e acrilico?")).toBe(
      'ok',
    );
  });

  it('hands the second stage the cached prompt when umlauts spelled out or a compound made the difference', () => {
    const cached = canonicalPrompt('Kannst du mir ein Rezept für Käsespätzle für zwölf Personen geben?').tokens;
    const next = canonicalPrompt('Kannst du mir ein Rezept fuer Kaesespaetzle fuer zwoelf Personen geben?').tokens;
    expect(verifyCandidate(cached, next)).toEqual({ ok: true, corrected: cached });
    // Case alone is no other word to the model: nothing to correct.
    expect(
      verifyCandidate(
        cached,
        canonicalPrompt('kannst du mir ein rezept für käsespätzle für zwölf personen geben').tokens,
      ),
    ).toEqual({
      ok: true,
    });
  });
});
