import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { realModelPresent, SHARED_MODELS } from '../support/tiny-onnx-model.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The near-miss classes of the second round (eval/semantic/README.md) through
 * a running gateway with the real all-MiniLM-L6-v2: a real word for another,
 * swapped roles, "A for B" / "B for A", "A to B" / "B to A", quantifiers and
 * other languages get their own answer, trivial variants (accents dropped and
 * courtesy in other languages too) are served from the semantic tier, and the exact tier answers only the request as sent, so
 * `X-Semantic-Cache: off` and a model without the semantic cache turn every
 * folding off. Each pair has its own user name (`name`), so no pair sees
 * another's entries.
 */

const KEY = 'gw_classes_e2e_key_0123456789ab';
const ADMIN_KEY = 'gw_classes_e2e_admin_0123456789';
const redis = testRedis();
const present = realModelPresent();
if (!present)
  process.stderr.write(
    `\n!! SKIPPED: the semantic near-miss classes test: no all-MiniLM-L6-v2 in ${SHARED_MODELS} (bash scripts/export-minilm-onnx.sh)\n\n`,
  );
let gateway: Gateway | undefined;
let upstream: FakeUpstream | undefined;
const prefix = uniquePrefix('semantic-classes');
let pairCount = 0;

async function client(): Promise<OpenAI> {
  if (!gateway) {
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a-secret' });
    gateway = await startGateway({
      env: {
        REDIS_KEY_PREFIX: prefix,
        API_KEYS: KEY,
        ADMIN_API_KEYS: ADMIN_KEY,
        PROVIDER_A_API_KEY: 'up-a-secret',
        DLP_ENABLED: 'false',
        RATE_LIMIT_REQUESTS: '100000',
        EMBEDDING_BACKEND: 'onnx',
        EMBEDDING_MODEL_PATH: SHARED_MODELS,
      },
      config: {
        providers: [
          {
            name: 'provider_a',
            api_key_env: 'PROVIDER_A_API_KEY',
            base_url: upstream.url,
            models: ['a-4o', 'a-4o-exact'],
            semantic_cache_by_model: { 'a-4o-exact': false },
            max_retries: 0,
          },
        ],
      },
      providers: ['provider_a'],
    });
    const url = gateway.baseUrl;
    await waitFor(
      async () =>
        ((await (await fetch(`${url}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } })).json()) as Untyped)
          .semantic_cache.status === 'ready',
      90_000,
      'the real model to load',
    );
  }
  return new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 30_000 });
}

/** `a` (a miss, stored), then `b`: what the gateway answered `b` with. */
async function pair(
  a: string,
  b: string,
  options: { model?: string; headers?: Record<string, string> } = {},
): Promise<string | null> {
  const openai = await client();
  // Semantic partitions include the user name, so each pair is alone in its own.
  const name = `pair${++pairCount}`;
  const send = async (content: string) => {
    const { response } = await openai.chat.completions
      .create(
        { model: options.model ?? 'a-4o', messages: [{ role: 'user', content, name }] },
        { headers: options.headers ?? {} },
      )
      .withResponse();
    return response.headers.get('x-cache');
  };
  expect(await send(a)).toBe('MISS');
  return send(b);
}

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe.runIf(present)('semantic near-miss classes through the gateway', () => {
  it.each([
    ['real word for real word', 'How much does a horse cost?', 'How much does a house cost?'],
    [
      'real word for real word',
      'Which county has the highest median income?',
      'Which country has the highest median income?',
    ],
    [
      'pronoun roles',
      'How do I tell my partner that I cheated on them?',
      'How do I tell my partner that they cheated on me?',
    ],
    ['pronoun roles', 'Why does my dog ignore me?', 'Why do I ignore my dog?'],
    ['noun roles', 'Does the butterfly eat the moth?', 'Does the moth eat the butterfly?'],
    ['A for B', 'Where can I exchange euros for dollars?', 'Where can I exchange dollars for euros?'],
    ['A to B', 'How do I switch from Android to iPhone?', 'How do I switch from iPhone to Android?'],
    ['quantifier', 'Are all mushrooms poisonous?', 'Are some mushrooms poisonous?'],
    ['quantifier', 'Find flights with at most one stop', 'Find flights with at least one stop'],
    ['French real word', 'Le poisson est-il bon pour les chats ?', 'Le poison est-il bon pour les chats ?'],
    ['Portuguese real word', 'Quanto custa uma cobra?', 'Quanto custa uma cabra?'],
    ['German direction', 'Wie rechne ich Meilen in Kilometer um?', 'Wie rechne ich Kilometer in Meilen um?'],
    ['German real word', 'Wie lange muss Rind im Ofen garen?', 'Wie lange muss Rand im Ofen garen?'],
    ['Spanish accent in both', '¿Qué edad tiene el papá de Messi?', '¿Qué edad tiene el papa de Messi?'],
    [
      'possessor moved',
      "My neighbour's tree fell onto my fence in a storm. Who pays for the repair?",
      "My tree fell onto my neighbour's fence in a storm. Who pays for the repair?",
    ],
    ['a letter far from the one it replaces', 'What does the enzyme lipase do?', 'What does the enzyme ligase do?'],
    ['a technical word', 'What is the molar mass of sodium sulfate?', 'What is the molar mass of sodium sulfite?'],
    ['nouns that meet in a later sense', 'Is a house with a pond worth it?', 'Is a house with a pool worth it?'],
    ['a value quoted', 'What does this YAML parse to: enabled: no', 'What does this YAML parse to: enabled: "no"'],
    ['Spanish real word one slip away', '¿Cuánto cuesta una casa en Madrid?', '¿Cuánto cuesta una cosa en Madrid?'],
    ['Spanish verb with its pronoun', 'Dame la receta de la paella', 'Dime la receta de la paella'],
    [
      'a word moved past "for" and its object',
      'Can I exchange the iPhone 15 for the iPhone 15 Pro at an Apple Store?',
      'Can I exchange the iPhone 15 Pro for the iPhone 15 at an Apple Store?',
    ],
  ])(
    'a near miss (%s) gets its own answer',
    async (_, a, b) => {
      expect(await pair(a, b)).toBe('MISS');
    },
    60_000,
  );

  it.each([
    [
      'a misspelling that is no word',
      'How do I recieve packages while abroad?',
      'How do I receive packages while abroad?',
    ],
    ['case and punctuation', 'What is the capital of Peru?', 'what is the capital of peru'],
    ['courtesy', 'Can you tell me how to make pancakes?', 'how to make pancakes'],
    [
      'a word in capitals for emphasis',
      'Which galleries in Madrid are FREE on Sundays?',
      'Which galleries in Madrid are free on Sundays',
    ],
    ['chat shorthand', 'can u show me how to hem trousers pls', 'Can you show me how to hem trousers?'],
    ['French case and punctuation', 'Quelle est la capitale du Canada ?', 'quelle est la capitale du canada'],
    ['German case', 'Wie koche ich Spargel?', 'wie koche ich spargel'],
    [
      'French accents dropped',
      'Comment réinitialiser mon mot de passe Netflix ?',
      'comment reinitialiser mon mot de passe netflix',
    ],
    [
      'Spanish greeting and thanks',
      'Hola, ¿me recomiendas un portátil para programar? Gracias.',
      '¿Me recomiendas un portátil para programar?',
    ],
    ['Chinese polite opening', '请问，北京的地铁几点停运？', '北京的地铁几点停运'],
    ['Chinese polite ask in a later clause', '我是三年级的老师，请问怎么布置作业？', '我是三年级的老师,怎么布置作业?'],
    [
      'Italian x for per',
      'Qual è il modo migliore per stirare una camicia?',
      'qual e il modo migliore x stirare una camicia',
    ],
    ['Turkish chat present', 'Bebeğim neden sürekli ağlıyor?', 'bebegim neden surekli agliyo'],
    [
      'German umlauts spelled out',
      'Wie heiß muss das Wasser sein, um Bettwäsche zu waschen?',
      'Wie heiss muss das Wasser sein, um Bettwaesche zu waschen?',
    ],
    [
      'Portuguese chat shorthand',
      'Você sabe quanto tempo leva para uma galinha chocar os ovos?',
      'vc sabe quanto tempo leva pra uma galinha chocar os ovos',
    ],
    [
      'a swapped function word',
      'How do I unfreeze my bank card in the app?',
      'How do I unfreeze my bank card in teh app?',
    ],
    [
      'a unit glued to its number',
      'How much is 50 mL of olive oil in grams?',
      'how much is 50ml of olive oil in grams',
    ],
    [
      'a quote in capitals in a prompt in capitals',
      "WHAT DOES 'UNDER OFFER' MEAN ON A PROPERTY LISTING?",
      "What does 'under offer' mean on a property listing?",
    ],
    [
      'Spanish accents of a dead key dropped, ñ kept',
      '¿Cuántas horas debe dormir un niño de 3 años?',
      'cuantas horas debe dormir un niño de 3 años',
    ],
    [
      'a German misspelling that is no word',
      'Wo finde ich die Unterlagen für die Steuer?',
      'Wo finde ich die Unterlagn für die Steuer?',
    ],
    [
      'German quotes dropped',
      'Was bedeutet „Staffelmiete“ im Mietvertrag?',
      'Was bedeutet Staffelmiete im Mietvertrag?',
    ],
    [
      'Swedish greeting and thanks',
      'Hej! Hur lång tid tar det att få ett nytt pass? Tack på förhand',
      'Hur lång tid tar det att få ett nytt pass?',
    ],
    ['a Spanish typo', '¿Cómo declarar el alquiler en la renta?', '¿Cómo delcarar el alquiler en la renta?'],
    ['a French typo on AZERTY', 'Combien coûte une baguette à Paris ?', 'Combien coûte une bqguette à Paris ?'],
    ['Chinese punctuation', '怎么煮米饭？', '怎么煮米饭'],
  ])(
    'a trivial variant (%s) is served by the semantic tier, not the exact one',
    async (_, a, b) => {
      expect(await pair(a, b)).toBe('SEMANTIC_HIT');
    },
    60_000,
  );

  it('answers from the exact tier only the request as sent, give or take surrounding whitespace', async () => {
    expect(await pair('How many moons does Neptune have?', '  How many moons does Neptune have?\n')).toBe('HIT');
  }, 60_000);

  it('folds nothing when the semantic cache is off for the request or the model', async () => {
    expect(
      await pair('Hi! How many moons does Uranus have?', 'How many moons does Uranus have?', {
        headers: { 'X-Semantic-Cache': 'off' },
      }),
    ).toBe('MISS');
    expect(await pair('What is the capital of Chile?', 'what is the capital of chile', { model: 'a-4o-exact' })).toBe(
      'MISS',
    );
    expect(await pair('What is the capital of Chile?', 'What is the capital of Chile?', { model: 'a-4o-exact' })).toBe(
      'HIT',
    );
  }, 60_000);
});
