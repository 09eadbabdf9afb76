import { describe, expect, it } from 'vitest';
import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { guardSignatureOf } from '../../src/cache/prompt-guards.ts';
import { verifyCandidate } from '../../src/cache/prompt-verifier.ts';
import { verdict } from '../support/prompt-verdict.ts';

describe('canonicalPrompt', () => {
  it('takes out what cannot change the answer', () => {
    const same = [
      'Where is the Eiffel tower?',
      '  Where   is the Eiffel tower?!',
      'Where is the Eiffel tower (please)?',
      'Where is the Eiffel tower — please?',
      'Hi, can you tell me where the Eiffel tower is, please?',
    ];
    const texts = same.slice(0, 4).map((text) => canonicalPrompt(text).text);
    expect(new Set(texts).size).toBe(1);
    expect(canonicalPrompt("What's the time? I'm late and won't wait.").text).toBe(
      'what is the time i am late and will not wait',
    );
    expect(canonicalPrompt('How do I boil an egg?').text).toBe(canonicalPrompt('how to boil an egg').text);
    expect(canonicalPrompt('"Explain recursion."').text).toBe(canonicalPrompt('Explain recursion').text);
    expect(canonicalPrompt(same[4] as string).tokens).toEqual(['where', 'the', 'Eiffel', 'tower', 'is']);
    expect(canonicalPrompt('WHERE IS THE EIFFEL TOWER?').text).toBe(canonicalPrompt('where is the eiffel tower').text);
    expect(canonicalPrompt('Explain recursion (in Python) briefly.').text).toBe(
      canonicalPrompt('Explain recursion in Python briefly').text,
    );
  });

  it('reads contractions typed without an apostrophe, chat shorthand and alternating case', () => {
    const same = (a: string, b: string) => expect(canonicalPrompt(a).text).toBe(canonicalPrompt(b).text);
    same('whats the best time to take creatine', "What's the best time to take creatine?");
    same('why doesnt my pan stay non-stick', "Why doesn't my pan stay non-stick?");
    same('im sure u cant and wont', "I'm sure you can't and won't");
    same('Store beans w/o a jar b/c of air, w/ a lid', 'Store beans without a jar because of air, with a lid');
    same('Approx. how many calories in a croissant?', 'Approximately how many calories in a croissant?');
    same('wHaT iS tHe DeNsItY oF gOlD', 'What is the density of gold');
    // A request typed in capitals under a document that is not.
    same(
      'Week 1: run 3 km on Monday. SUMMARISE WEEK 1 FOR ME IN PLAIN WORDS.',
      'Week 1: run 3 km on Monday. Summarise week 1 in plain words.',
    );
    expect(canonicalPrompt('Some notes here. RUN LS -R IN THE HOME DIR.').tokens).toContain('-R');
    same('why wont my pan stay non stick thru the week', "Why won't my pan stay non-stick through the week?");
    expect(verdict('Is this pan non-stick?', 'Is this pan stick?')).toBe('content');
    // Brands keep their case; a word such as `its` or `well` is no contraction.
    expect(canonicalPrompt('Is the iPhone or the iPad better for its price').tokens).toEqual([
      'is',
      'the',
      'iPhone',
      'or',
      'the',
      'iPad',
      'better',
      'for',
      'its',
      'price',
    ]);
    // Words that are properties of every JavaScript object are plain words.
    expect(canonicalPrompt('what is a constructor, toString or __proto__').tokens.slice(0, 5)).toEqual([
      'what',
      'is',
      'a',
      'constructor',
      'toString',
    ]);
  });

  it('takes out greetings, thanks and the lead-ins of a request', () => {
    const same = (a: string, b: string) => expect(canonicalPrompt(a).text).toBe(canonicalPrompt(b).text);
    same('Would you kindly summarize the plot of The Great Gatsby?', 'Summarize the plot of The Great Gatsby.');
    same('Would you mind telling me how tides work?', 'Tell me how tides work');
    same('Good morning! How many tablespoons are in a cup?', 'How many tablespoons are in a cup?');
    same("I'd really appreciate it if you could explain compound interest.", 'Explain compound interest.');
    same('Sorry to bother you, but how does a microwave oven heat food?', 'How does a microwave oven heat food?');
    same('Hey there, how can I learn to meditate? Thanks in advance.', 'How to learn to meditate');
    same('Would you be able to give me some tips?', 'give me some tips');
    same('Could you please explain what the Big Bang theory is?', 'What the Big Bang theory is');
    same('Quick question: how do I boil an egg? Thanks so much! 🙏', 'How do I boil an egg');
    same("I'd be grateful if you could list the planets -- in order.", 'List the planets in order');
    same('Dear assistant, please and thank you: list the planets. Cheers.', 'List the planets');
    same('Write a haiku about a server outage at 3 a.m.', 'Write a haiku about a server outage at 3 am!');
    same('Could you please tell me the capital of Kenya?', 'What is the capital of Kenya?');
    same('Some notes. Tell me the deadline.', 'Some notes. What is the deadline?');
    same('hey!! could u pls tell me how to unclog a drain? thx', 'How to unclog a drain');
    same('thx in advance - how do I descale a kettle?', 'How do I descale a kettle?');
    same('how often shud I water basil', 'How often should I water basil?');
    same('can i return a gift without the receipt pls help', 'Can I return a gift without the receipt?');
    // Only where the prompt ends: "help me write" is the request.
    expect(verdict('pls help me write a cover letter', 'write a cover letter')).not.toBe('ok');
    same('Is it OK to fly with a cold?', 'is it ok to fly with a cold??');
    same('Good morning :) Can you list the halogens?', 'List the halogens.');
    same('hello! quick favour: name the bones of the ear pls 🙏', 'Name the bones of the ear');
    same('Hiya! Mind suggesting a yoga routine? Ta!', 'Suggest a yoga routine.');
    same('Hi, sorry to ask, but could you kindly convert 2 kg to pounds for me?', 'Convert 2 kg to pounds');
    same('Task: suggest a recipe\nIngredients: leeks', 'task: suggest a recipe\ningredients: leeks');
    expect(canonicalPrompt('Never mind explaining it').tokens).toEqual(['never', 'mind', 'explaining', 'it']);
    same("Sorry if this is a dumb question, but what's a stock split?", 'What is a stock split?');
    same('Apologies for the basic question, but what is a bond?', 'What is a bond?');
    same('Dear sir, could you help me understand what a bond is? Thanking you in advance.', 'What a bond is');
    same(
      'Would you mind checking the plan and telling me if it works? Thanks so much in advance!',
      'Check the plan and tell me if it works',
    );
    same("The order's been late; it's been a week", 'The order has been late; it has been a week');
    expect(verdict('What are the rules of cricket?', 'Can you tell me the rules of cricket?')).toBe('ok');
    expect(canonicalPrompt('Tell me a joke about cats').tokens).toEqual(['tell', 'me', 'a', 'joke', 'about', 'cats']);
    expect(canonicalPrompt('What does cheers mean in British English?').tokens).toContain('cheers');
    // Not where the words are the question or its content.
    expect(canonicalPrompt('Can you eat raw fish?').tokens).toEqual(['can', 'you', 'eat', 'raw', 'fish']);
    expect(canonicalPrompt('Plan a good morning routine').tokens).toEqual(['plan', 'a', 'good', 'morning', 'routine']);
  });

  it('keeps case where it may mean something, and code and quotes as written', () => {
    expect(canonicalPrompt('What is CO?').text).not.toBe(canonicalPrompt('What is Co?').text);
    expect(canonicalPrompt('What does ls -R do?').text).not.toBe(canonicalPrompt('What does ls -r do?').text);
    expect(canonicalPrompt('In Python, is True truthy?').text).not.toBe(
      canonicalPrompt('In Python, is true truthy?').text,
    );
    expect(canonicalPrompt('Run `git log  --oneline` please').tokens).toEqual(['run', '`git log  --oneline`']);
    expect(canonicalPrompt('Translate "Hello, World" to French').tokens).toContain('"Hello, World"');
    // A greeting is courtesy only where a prompt starts.
    expect(canonicalPrompt('Translate hi to French').tokens).toContain('hi');
  });

  it('keeps the capital of a name that is also a common word, inside a sentence', () => {
    expect(canonicalPrompt('How expensive is Turkey in July?').tokens).toContain('Turkey');
    expect(canonicalPrompt('How expensive is Turkey in July?').text).not.toBe(
      canonicalPrompt('How expensive is turkey in July?').text,
    );
    expect(canonicalPrompt("What is Turkey's capital?").tokens).toEqual(['what', 'is', 'Turkey', "'s", 'capital']);
    expect(canonicalPrompt('Is it worth learning Go this year?').text).not.toBe(
      canonicalPrompt('Is it worth learning go this year?').text,
    );
  });

  it('still folds a capital that starts a sentence, and every capital of a Title Case or shouted prompt', () => {
    const same = (a: string, b: string) => expect(canonicalPrompt(a).text).toBe(canonicalPrompt(b).text);
    same('Turkey is expensive in July', 'turkey is expensive in July');
    same('I plan a trip. Turkey or Greece?', 'I plan a trip. turkey or Greece?');
    same('Notes:\nTurkey in early July', 'Notes:\nturkey in early July');
    same('Is Go The Best First Programming Language', 'is go the best first programming language');
    same('IS TURKEY EXPENSIVE IN JULY', 'is turkey expensive in july');
    same(
      'Explain The Difference Between Stocks And Bonds For A First-Time Investor.',
      'explain the difference between stocks and bonds for a first-time investor',
    );
    same('Is salt & pepper enough?', 'Is salt and pepper enough?');
  });

  it('keeps a capital inside a sentence, since it may be the payload', () => {
    expect(canonicalPrompt('Hash the string Hello with SHA-256.').text).not.toBe(
      canonicalPrompt('Hash the string hello with SHA-256.').text,
    );
    expect(canonicalPrompt('In C, does Int x = 5; compile?').tokens).toContain('Int');
  });

  it('keeps a code chunk as one token, exactly as written', () => {
    expect(canonicalPrompt('Explain this command before I run it: rm -rf ./build').tokens).toEqual([
      'explain',
      'this',
      'command',
      'before',
      'i',
      'run',
      'it',
      'rm',
      '-rf',
      './build',
    ]);
    expect(canonicalPrompt('What does grep -I do?').tokens).toContain('-I');
    expect(canonicalPrompt('Which elements does .Header match?').tokens).toContain('.Header');
    expect(canonicalPrompt('In C, what does printf("%d", i++); print?').tokens).toContain('i++');
    expect(canonicalPrompt('Is std::vector faster than a list (in C++)?').tokens).toEqual([
      'is',
      'std::vector',
      'faster',
      'than',
      'a',
      'list',
      'in',
      'C++',
    ]);
  });
});

describe('verifyCandidate', () => {
  it('reads a possessive typed without its apostrophe, and holds singular and plural apart', () => {
    expect(verdict("How do I clean my dog's ears?", 'how do i clean my dogs ears')).toBe('ok');
    expect(verdict('how do i clean my dogs ears', "How do I clean my dog's ears?")).toBe('ok');
    expect(verdict("My dog's scratching a lot; why?", 'My dog is scratching a lot; why?')).toBe('ok');
    expect(verdict('How do I train my dog?', 'How do I train my dogs?')).toBe('content');
  });

  it('reads a typo of a function word the other prompt has as that word', () => {
    expect(
      verdict('Which documents do I need to register a company?', 'Wich documents do I need to register a company?'),
    ).toBe('ok');
    expect(
      verdict('Which documents do I need to register a company?', 'Wish documents do I need to register a company?'),
    ).toBe('content');
  });

  it('reads a number in words as its digits', () => {
    expect(
      verdict('How many moons does Mars have? Give 3 facts.', 'How many moons does Mars have? Give three facts.'),
    ).toBe('ok');
  });

  it('accepts a moved phrase, a typo, an acronym and function words', () => {
    expect(verdict('In Rust, how do I read a file?', 'How do I read a file in Rust?')).toBe('ok');
    expect(verdict('Recommend a good book on gardening', 'Recomend a good book on gardenning')).toBe('ok');
    expect(
      verdict('What does the CEO of a startup do?', 'What does the chief executive officer of a startup do?'),
    ).toBe('ok');
    expect(verdict('Suggest some dinner ideas', 'Suggest dinner ideas')).toBe('ok');
  });

  it('rejects a word moved past a relation word and its object inside the prompt, not a phrase moved to its other end', () => {
    expect(
      verdict(
        'Can I exchange the iPhone 15 for the iPhone 15 Pro at an Apple Store?',
        'Can I exchange the iPhone 15 Pro for the iPhone 15 at an Apple Store?',
      ),
    ).toBe('order');
    expect(
      verdict(
        'Which documents are needed to export wine from France to Japan?',
        'To export wine from France to Japan, which documents are needed?',
      ),
    ).toBe('ok');
  });

  it('hands the second stage the new prompt with its typos and acronyms written as the cached prompt has them', () => {
    const check = (cached: string, next: string) =>
      verifyCandidate(canonicalPrompt(cached).tokens, canonicalPrompt(next).tokens);
    expect(check('Explain the theory of relativity.', 'Explain the theroy of relativty.')).toEqual({
      ok: true,
      corrected: ['explain', 'the', 'theory', 'of', 'relativity'],
    });
    expect(check('How does a CPU work?', 'How does a central processing unit work?')).toEqual({
      ok: true,
      corrected: ['how', 'does', 'a', 'CPU', 'work'],
    });
    expect(check('What does the World Health Organization do?', 'What does the WHO do?')).toEqual({
      ok: true,
      corrected: ['what', 'does', 'the', 'World', 'Health', 'Organization', 'do'],
    });
    expect(check('Where is the Eiffel tower?', 'where is the Eiffel tower')).toEqual({ ok: true });
    expect(
      check('Can you explain what an NDA covers?', 'Can you explain what a non-disclosure agreement covers?'),
    ).toMatchObject({ ok: true });
    expect(
      check('A packing list for a trip to Toronto in November', 'A packing list for a trip to Toronto in Novmber'),
    ).toMatchObject({ ok: true });
    expect(check('What is the capital of Iran?', 'What is the capital of Iraq?')).toEqual({
      ok: false,
      reason: 'payload',
    });
    expect(
      check(
        'What are the symptoms of ADHD in adults?',
        'What are the symptoms of attention deficit hyperactivity disorder in adults?',
      ),
    ).toMatchObject({ ok: true });
  });

  it('rejects a swapped direction or order, whatever the words', () => {
    expect(verdict('Convert 10 miles to kilometres', 'Convert 10 kilometres to miles')).toBe('order');
    expect(verdict('Does Mars orbit the Sun?', 'Does the Sun orbit Mars?')).toBe('order');
    expect(verdict('Translate this from German into Dutch', 'Translate this from Dutch into German')).toBe('order');
  });

  it('rejects another content word: antonyms, time, entities, tone, negating prefixes', () => {
    expect(verdict('How do I zoom in on a map?', 'How do I zoom out on a map?')).toBe('content');
    expect(verdict('What were the top films last year?', 'What were the top films this year?')).toBe('content');
    expect(verdict('What is the population of lyon?', 'What is the population of lille?')).toBe('content');
    expect(verdict('What is the population of Lyon?', 'What is the population of Lille?')).toBe('payload');
    expect(verdict('Write a formal apology email', 'Write a casual apology email')).toBe('content');
    expect(verdict('Which berries are edible?', 'Which berries are inedible?')).toBe('content');
    expect(verdict('Is it safe to fly?', 'Is it unsafe to fly?')).toBe('content');
  });

  it('lets a prompt without capitals match one with them, but not a capitonym, and holds case between two prompts that use it', () => {
    expect(verdict('What is DNA?', 'what is dna?')).toBe('ok');
    expect(verdict('how does nasa test rockets', 'How does NASA test rockets?')).toBe('ok');
    expect(verdict('how does wifi work', 'How does WiFi work?')).toBe('ok');
    // A capital right after a number is a unit's: the food Calorie is a thousand calories.
    expect(
      verdict('A snack has 150 Cal. How many joules is that?', 'A snack has 150 cal. How many joules is that?'),
    ).toBe('payload');
    expect(
      verdict(
        'URGENT: OUR WORDPRESS SITE IS DOWN. HOW DO I FIX IT?',
        'Urgent: our WordPress site is down. How do I fix it?',
      ),
    ).toBe('ok');
    expect(verdict('What should I plant in early March?', 'what should i plant in early march')).toBe('ok');
    expect(verdict('what is the capital of turkey', 'What is the capital of Turkey')).toBe('payload');
    expect(verdict('Hash the string Hello with SHA-256.', 'Hash the string hello with SHA-256.')).toBe('payload');
    expect(verdict('What does grep -i do?', 'what does grep -I do?')).toBe('payload');
    expect(
      verdict(
        'Which elements does the CSS selector .Header match?',
        'which elements does the css selector .header match?',
      ),
    ).toBe('payload');
    expect(verdict('Explain this command: rm -rf ./build', 'Explain this command: rm -rf /build')).toBe('payload');
    expect(verdict('How many bits are in 1 kB?', 'how many bits are in 1 kb?')).toBe('payload');
    expect(
      verdict(
        'A shuttle stopped 3 Mm from the station. How far is that in km?',
        'A shuttle stopped 3 mm from the station. How far is that in km?',
      ),
    ).toBe('payload');
    expect(verdict('What does the vim command G do?', 'what does the vim command g do?')).toBe('payload');
    expect(verdict('best way to learn SPANISH fast', 'best way to learn Spanish fast')).toBe('ok');
    // A word in capitals for emphasis is the word, beside other capitals; an acronym that is no word stays one.
    expect(
      verdict('Which galleries in Madrid are FREE on Sundays?', 'Which galleries in Madrid are free on Sundays'),
    ).toBe('ok');
    expect(verdict('How do I write a JSON schema in Rust?', 'How do I write a json schema in Rust?')).toBe('payload');
    expect(verdict('When was the Eiffel Tower built?', 'When was the Eiffel tower built?')).toBe('ok');
    expect(verdict('When was the Eiffel Tower built?', 'When was the eiffel Tower built?')).toBe('payload');
    expect(verdict('What is the history of the Olympic Games?', 'What is the history of the\nOlympic Games?')).toBe(
      'ok',
    );
    expect(verdict('compute (8 - 3) * 2', 'compute 8 - 3 * 2')).not.toBe('ok');
  });

  it('rejects a payload that differs: case, symbols, code', () => {
    expect(verdict('Match ^[a-z]+$ in JavaScript', 'Match ^[A-Z]+$ in JavaScript')).toBe('payload');
    expect(verdict('How many joules is 1 mJ?', 'How many joules is 1 MJ?')).toBe('payload');
    expect(verdict('Why does `x = 1` fail here?', 'Why does `x == 1` fail here?')).toBe('payload');
  });

  it('rejects opposites one or two letters apart, and still accepts a typo of either', () => {
    expect(verdict('What rights does an employer have?', 'What rights does an employee have?')).toBe('content');
    expect(verdict('Is the trainer liable for injuries?', 'Is the trainee liable for injuries?')).toBe('content');
    expect(verdict('How do I maximize a window?', 'How do I minimize a window?')).toBe('content');
    expect(verdict('What causes hyperthyroidism in cats?', 'What causes hypothyroidism in cats?')).toBe('content');
    expect(verdict('Why is burning wood endothermic?', 'Why is burning wood exothermic?')).toBe('content');
    expect(verdict('What does a course in microeconomics cover?', 'What does a course in macroeconomics cover?')).toBe(
      'content',
    );
    expect(verdict('Is interstate trucking regulated?', 'Is intrastate trucking regulated?')).toBe('content');
    expect(verdict('Which is the strongest metal?', 'Which is the stronger metal?')).toBe('content');
    expect(verdict('What does an employer owe a worker?', 'What does an emploer owe a worker?')).toBe('ok');
    expect(verdict('How do I maximize a window?', 'How do I maximze a window?')).toBe('ok');
    expect(verdict('Who are the employers in this town?', 'Who are the employer in this town?')).toBe('ok');
  });

  it('rejects two neighbouring words or two symbols swapped, but lets not, an adverb or a phrase with a symbol move', () => {
    expect(verdict('what does git diff main feature show', 'what does git diff feature main show')).toBe('order');
    expect(verdict('Explain: mv settings.yaml settings.bak', 'Explain: mv settings.bak settings.yaml')).toBe('order');
    // One adverb may stand anywhere in its clause while another phrase moves; two never trade places.
    expect(
      verdict(
        'Suddenly my budgie is plucking its feathers out. Why?',
        'Why is my budgie suddenly plucking its feathers out?',
      ),
    ).toBe('ok');
    expect(verdict('Take 2 pills weekly and 1 daily', 'Take 2 pills daily and 1 weekly')).toBe('order');
    // A phrase led by one relation word goes from one end of the prompt to the other.
    expect(
      verdict(
        'Under English law, what is the difference between murder and manslaughter?',
        'What is the difference between murder and manslaughter under English law?',
      ),
    ).toBe('ok');
    expect(verdict('Is a cat faster than a dog?', 'Is a dog faster than a cat?')).toBe('order');
    // Words of one compound change places: the pellets are another animal's.
    expect(verdict('Can I feed my cat dog biscuit treats?', 'Can I feed my dog cat biscuit treats?')).toBe('order');
    expect(verdict('What does a => b mean in JavaScript?', 'What does a >= b mean in JavaScript?')).toBe('payload');
    expect(verdict('What does a = > b mean in JavaScript?', 'What does a > = b mean in JavaScript?')).toBe('order');
    expect(verdict('In C, what does *p++ do?', 'In C, what does ++*p do?')).toBe('payload');
    expect(
      verdict(
        'In C, what does this print: int i = 5; printf("%d", i++);',
        'In C, what does this print: int i = 5; printf("%d", ++i);',
      ),
    ).toBe('payload');
    expect(verdict("Why won't my phone charge?", 'Why will my phone not charge?')).toBe('ok');
    expect(verdict('Why is not Python fast?', 'Why is Python not fast?')).toBe('ok');
    // Words that meet only once function words are dropped were not swapped.
    expect(verdict('What is the capital of France?', 'France: its capital?')).toBe('ok');
    expect(verdict('How do I quickly reset a router?', 'How do I reset a router quickly?')).toBe('ok');
    expect(verdict('In C++, how do I sort a vector?', 'How do I sort a vector in C++?')).toBe('ok');
    expect(verdict('In Python 3, how do I read a CSV file?', 'How do I read a CSV file in Python 3?')).toBe('ok');
  });

  it('compares a long prompt to its last word, past any embedding window', () => {
    const report = 'The committee reviewed the budget for the new library wing in detail. '.repeat(80);
    expect(
      verdict(
        `${report} The proposal was approved. Summarize the decision.`,
        `${report} The proposal was rejected. Summarize the decision.`,
      ),
    ).toBe('content');
    expect(verdict(`${report} Summarize the decision.`, `${report}  summarize the decision`)).toBe('ok');
  });

  it('rejects two long prompts that differ in many words without searching them for typos, and still explains a few typos in a long one', () => {
    const words = (offset: number) =>
      Array.from(
        { length: 2000 },
        (_, i) => `word${String.fromCharCode(97 + ((i + offset) % 26))}${'abcdefghij'[(i * 7 + offset) % 10]}`,
      ).join(' ');
    expect(verdict(words(0), words(1))).toBe('content');
    const report = 'The committee reviewed the budget for the new library wing in detail. '.repeat(40);
    expect(
      verdict(`${report} Summarize the decision of the committee.`, `${report} Sumarize the decison of the comittee.`),
    ).toBe('ok');
  });

  it('writes units alike, opens a clause after a dash or a quote that ends a sentence, and reads a shouted quote in lower case', () => {
    const tokens = (text: string) => canonicalPrompt(text).tokens;
    expect(tokens('Pour 50ml of milk')).toEqual(tokens('Pour 50 mL of milk'));
    expect(tokens('Pour 2L of milk')).toEqual(tokens('Pour 2 l of milk'));
    expect(tokens('Is 5mW safe?')).not.toEqual(tokens('Is 5 MW safe?'));
    expect(tokens('What happened on the 1st of May?')).toContain('1st');
    expect(verdict('how do I set up 2FA', 'how do I set up two-factor authentication')).toBe('ok');
    expect(verdict("Why doesn't my laptop charge past 80 percent?", 'Why does my laptop not charge past 80%?')).toBe(
      'ok',
    );
    expect(verdict('Is 80 per cent humidity too high?', 'Is 80% humidity too high?')).toBe('ok');
    expect(verdict('Is 80% humidity too high?', 'Is 90% humidity too high?')).not.toBe('ok');
    expect(
      verdict(
        'Translate into French: The meeting has been postponed.',
        'translate into french - The meeting has been postponed.',
      ),
    ).toBe('ok');
    expect(
      verdict(
        'Is this sentence correct: "Neither of the reports were submitted on time."',
        'Is this sentence correct: "Neither of the reports were submitted on time." Thank you!',
      ),
    ).toBe('ok');
    expect(verdict("WHAT DOES 'UNDER OFFER' MEAN ON A LISTING?", "What does 'under offer' mean on a listing?")).toBe(
      'ok',
    );
    expect(verdict("What does 'UNDER OFFER' mean on a listing?", "What does 'under offer' mean on a listing?")).toBe(
      'payload',
    );
  });

  it('folds a name of several words that a case-blind prompt writes whole, capitonyms and acronyms included, after a year too', () => {
    expect(
      verdict(
        'How do I reset the oil light on a 2016 Ford Focus?',
        'how do i reset the oil light on a 2016 ford focus',
      ),
    ).toBe('ok');
    expect(
      verdict('how do i reset the tyre light on a 2018 vw golf', 'How do I reset the tyre light on a 2018 VW Golf?'),
    ).toBe('ok');
    // One capitonym alone is still the common word, and a unit after a quantity keeps its case.
    expect(verdict('Is Turkey safe to visit in May?', 'is turkey safe to visit in may')).not.toBe('ok');
    expect(verdict('Is 200 Cal a lot for lunch?', 'is 200 cal a lot for lunch')).not.toBe('ok');
  });

  it('reads a prompt that is one quote as a whole as its text, in the guards too', () => {
    expect(
      verdict('"Can I bring a power bank in my checked luggage?"', 'Can I bring a power bank in my checked luggage?'),
    ).toBe('ok');
    expect(guardSignatureOf('"How many bees live in a hive?"')).toBe(guardSignatureOf('How many bees live in a hive?'));
    expect(guardSignatureOf('«Combien d’abeilles vivent dans une ruche ?»')).toBe(
      guardSignatureOf('Combien d’abeilles vivent dans une ruche ?'),
    );
  });
});
