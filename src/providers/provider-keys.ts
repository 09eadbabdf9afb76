import type { ProviderConfig } from '../config/gateway-config.ts';
import { ProviderError } from '../errors/catalog.ts';
import type { Logger } from '../observability/logger.ts';

/** What a provider's key is looked up by: its name (for messages) and the variable config.yaml names. */
type KeyedProvider = Pick<ProviderConfig, 'name' | 'api_key_env'>;

/**
 * The upstream keys of this process. config.yaml names each provider's environment variable (`api_key_env`);
 * the key is read from it at the moment of use, so a reload that changes the variable takes effect, and is
 * never kept anywhere else. An empty variable counts as unset.
 */
export class ProviderKeys {
  private readonly env: NodeJS.ProcessEnv;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.env = env;
  }

  /** The provider's key, or undefined when its variable is unset or empty. */
  keyOf(provider: KeyedProvider): string | undefined {
    return this.env[provider.api_key_env] || undefined;
  }

  has(provider: KeyedProvider): boolean {
    return this.keyOf(provider) !== undefined;
  }

  /** The provider's key, or the `provider_error` a request sent to a provider without one gets. */
  require(provider: KeyedProvider): string {
    const key = this.keyOf(provider);
    if (key === undefined)
      throw new ProviderError(
        `${provider.name} is unavailable: its API key (${provider.api_key_env}) is not configured.`,
      );
    return key;
  }

  /** Every key that is set among `providers`: what upstream text is scrubbed of. */
  keysOf(providers: Iterable<KeyedProvider>): string[] {
    const keys: string[] = [];
    for (const provider of providers) {
      const key = this.keyOf(provider);
      if (key !== undefined) keys.push(key);
    }
    return keys;
  }

  /** One warning per provider without a key (naming its variable, never a key): what it serves answers `provider_error`. */
  warnUnset(providers: Iterable<KeyedProvider>, logger: Logger, serves: 'models' | 'jobs'): void {
    for (const provider of providers) {
      if (!this.has(provider))
        logger.warn(
          { provider: provider.name, env: provider.api_key_env },
          `provider key not set: its ${serves} will answer provider_error`,
        );
    }
  }
}
