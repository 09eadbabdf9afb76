import { InvalidApiKeyError, ServiceUnavailableError } from '../errors/catalog.ts';
import type { Logger } from '../observability/logger.ts';
import { hashApiKey, isWellFormedApiKey } from './api-key.ts';
import { KeyCache } from './key-cache.ts';
import { INVALIDATE_ALL } from './key-invalidation.ts';
import type { ApiKeyRecord, KeyStore } from './key-store.ts';
import { createPrincipal, type KeyAuthenticator, type Principal } from './principal.ts';
import type { StaticKeyAuthenticator } from './static-key-authenticator.ts';

/** Options of {@link GatewayAuthenticator}. */
export interface GatewayAuthenticatorOptions {
  /** Keys from `API_KEYS` / `ADMIN_API_KEYS`; checked first, never cached or stored. */
  staticKeys: StaticKeyAuthenticator;
  /** Issued keys. */
  store: KeyStore;
  /** How long a store lookup is trusted, ms (`AUTH_CACHE_TTL_MS`). */
  cacheTtlMs: number;
  /**
   * While the store is unreachable, a known key whose cached lookup is at most
   * this old keeps working, ms. Revocations are still applied: they delete the
   * entry. @defaultValue 300000 (5 minutes); 0 turns it off
   */
  staleIfErrorMs?: number;
  logger?: Logger;
  /** Clock for the cache, ms. @defaultValue `Date.now` */
  now?: () => number;
}

export function principalOf(record: ApiKeyRecord): Principal {
  return createPrincipal({
    keyHash: record.keyHash,
    owner: record.owner,
    maskedKey: record.maskedKey,
    admin: record.admin,
    keyId: record.id,
    policy: record.policy,
  });
}

/**
 * Authenticates a presented key: static keys first, then issued keys from the
 * store through an in-memory TTL cache (one store query per key per TTL, with
 * concurrent lookups of the same key sharing one query). Keys that do not
 * look like issued keys never reach the store. When the store is down, a
 * recently seen key keeps working and an unknown one gets 503, not 401: the
 * gateway cannot tell whether it is valid.
 */
export class GatewayAuthenticator implements KeyAuthenticator {
  private readonly cache: KeyCache;
  private readonly inflight = new Map<string, Promise<Principal | null>>();
  private readonly options: GatewayAuthenticatorOptions;
  private readonly staleIfErrorMs: number;
  /** Bumped by every invalidation: a lookup that raced one is answered but not cached. */
  private epoch = 0;

  constructor(options: GatewayAuthenticatorOptions) {
    this.options = options;
    this.staleIfErrorMs = options.staleIfErrorMs ?? 300_000;
    this.cache = new KeyCache({ ttlMs: options.cacheTtlMs, ...(options.now ? { now: options.now } : {}) });
  }

  async authenticate(key: string): Promise<Principal | undefined> {
    const keyHash = hashApiKey(key);
    const fromEnv = this.options.staticKeys.lookup(keyHash);
    if (fromEnv) return fromEnv;
    if (!isWellFormedApiKey(key)) return undefined;

    const cached = this.cache.get(keyHash);
    if (cached?.fresh) return this.unexpired(cached.principal);
    try {
      return this.unexpired(await this.lookup(keyHash));
    } catch (err) {
      if (err instanceof InvalidApiKeyError) throw err;
      if (cached?.principal && cached.ageMs <= this.staleIfErrorMs) {
        this.options.logger?.warn(
          { err, owner: cached.principal.owner },
          'key store unreachable: using the cached key',
        );
        return this.unexpired(cached.principal);
      }
      this.options.logger?.warn({ err }, 'key store unreachable: cannot check an issued key');
      throw new ServiceUnavailableError(
        'The gateway cannot reach its key store to check this API key; try again shortly.',
        { cause: err },
      );
    }
  }

  /** An expired key is refused with a message that says so (401), not as an unknown key. */
  private unexpired(principal: Principal | null): Principal | undefined {
    if (!principal) return undefined;
    if (principal.expiresAtMs !== undefined && (this.options.now ?? Date.now)() >= principal.expiresAtMs) {
      throw new InvalidApiKeyError(`This API key expired at ${new Date(principal.expiresAtMs).toISOString()}.`);
    }
    return principal;
  }

  private lookup(keyHash: string): Promise<Principal | null> {
    const pending = this.inflight.get(keyHash);
    if (pending) return pending;
    const startedAt = this.epoch;
    const request: Promise<Principal | null> = this.options.store
      .findByHash(keyHash)
      .then((record) => {
        const principal = record && !record.revoked ? principalOf(record) : null;
        if (this.epoch === startedAt) this.cache.set(keyHash, principal);
        return principal;
      })
      .finally(() => {
        if (this.inflight.get(keyHash) === request) this.inflight.delete(keyHash);
      });
    this.inflight.set(keyHash, request);
    return request;
  }

  /** Drops the cached lookup of one key hash, or of all with {@link INVALIDATE_ALL}. */
  invalidate(keyHashOrAll: string): void {
    this.epoch++;
    if (keyHashOrAll === INVALIDATE_ALL) {
      this.inflight.clear();
      this.cache.clear();
    } else {
      this.inflight.delete(keyHashOrAll);
      this.cache.delete(keyHashOrAll);
    }
  }
}
