import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from './fake-upstream.ts';
import { startGateway, type Gateway } from './processes.ts';

/** One provider entry of config.yaml. */
type ProviderEntry = { name: string } & Record<string, unknown>;

/** Options of {@link startGatewayWithTrio}. */
export interface TrioGatewayOptions {
  /** REDIS_KEY_PREFIX: the test file's own prefix. */
  prefix: string;
  /** API_KEYS: the client keys the gateway accepts. */
  apiKeys: readonly string[];
  /** What provider_a, provider_b and provider_c serve. */
  models: Record<ProviderLetter, string | readonly string[]>;
  /** Fields all three providers get (timeouts, retries, `drop_unsupported_params`). */
  provider?: Record<string, unknown>;
  /** Fields of one provider only (`embedding_models`, `upstream_models`). */
  perProvider?: Partial<Record<ProviderLetter, Record<string, unknown>>>;
  /** Providers after the three (another upstream), or a function of their upstreams (one of them again, other settings). */
  moreProviders?: ProviderEntry[] | ((upstreams: Record<ProviderLetter, FakeUpstream>) => ProviderEntry[]);
  /** config.yaml fields beside `providers` (`model_aliases`, `prices`). */
  config?: Record<string, unknown>;
  /** Environment of the API and the workers, over the defaults: semantic cache off, a rate limit no test reaches. */
  env?: Record<string, string>;
  /** The providers that get a worker. @defaultValue every provider of the config */
  workers?: readonly string[];
}

/** A gateway in front of the three loopback upstreams. */
export interface TrioGateway {
  gateway: Gateway;
  upstreams: Record<ProviderLetter, FakeUpstream>;
  /** The upstreams' keys, as the gateway's environment names them (`PROVIDER_A_API_KEY`...). */
  upstreamEnv: Record<string, string>;
  /** Stops the gateway's processes, then closes the upstreams. */
  stop(): Promise<void>;
}

const LETTERS: readonly ProviderLetter[] = ['a', 'b', 'c'];

/**
 * Starts the loopback upstreams of the three wire formats and a gateway whose
 * provider_a/b/c (OpenAI, Gemini, Anthropic) point at them, with one worker
 * per provider.
 */
export async function startGatewayWithTrio(options: TrioGatewayOptions): Promise<TrioGateway> {
  const { upstreams, env: upstreamEnv } = await startUpstreamTrio();
  const closeUpstreams = () => Promise.all(Object.values(upstreams).map((u) => u.close()));
  const providers: ProviderEntry[] = [
    ...LETTERS.map((letter) => {
      const models = options.models[letter];
      return {
        name: `provider_${letter}`,
        api_key_env: `PROVIDER_${letter.toUpperCase()}_API_KEY`,
        base_url: upstreams[letter].url,
        models: typeof models === 'string' ? [models] : models,
        ...options.perProvider?.[letter],
        ...options.provider,
      };
    }),
    ...(typeof options.moreProviders === 'function' ? options.moreProviders(upstreams) : (options.moreProviders ?? [])),
  ];
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      env: {
        REDIS_KEY_PREFIX: options.prefix,
        API_KEYS: options.apiKeys.join(','),
        ...upstreamEnv,
        SEMANTIC_CACHE_ENABLED: 'false',
        RATE_LIMIT_REQUESTS: '100000',
        ...options.env,
      },
      config: { ...options.config, providers },
      providers: options.workers ?? providers.map((p) => p.name),
    });
  } catch (err) {
    await closeUpstreams();
    throw err;
  }
  return {
    gateway,
    upstreams,
    upstreamEnv,
    async stop() {
      await gateway.stop();
      await closeUpstreams();
    },
  };
}
