import type { Principal } from './principal.ts';

/** Options of {@link KeyCache}. */
export interface KeyCacheOptions {
  /** How long a found key is trusted without asking the store, ms. */
  ttlMs: number;
  /** How long an unknown or revoked key is remembered, ms. @defaultValue min(5000, ttlMs) */
  negativeTtlMs?: number;
  /** Most entries kept; the oldest go first. @defaultValue 10000 */
  maxEntries?: number;
  /** Clock, ms. @defaultValue `Date.now` */
  now?: () => number;
}

interface Entry {
  principal: Principal | null;
  storedAt: number;
  expiresAt: number;
}

/** What the cache knows about a key hash. */
export interface CacheLookup {
  /** `null`: known to be unknown or revoked. */
  principal: Principal | null;
  fresh: boolean;
  ageMs: number;
}

/**
 * In-memory cache of key lookups by key hash, so the key store is asked at
 * most once per key per TTL per process. Entries are dropped by
 * {@link KeyCache.delete} when a revocation is announced. A Map keeps
 * insertion order, which makes "evict the oldest" a single iterator step.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly negativeTtlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.negativeTtlMs = options.negativeTtlMs ?? Math.min(5_000, options.ttlMs);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get(keyHash: string): CacheLookup | undefined {
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    const now = this.now();
    return { principal: entry.principal, fresh: now < entry.expiresAt, ageMs: now - entry.storedAt };
  }

  set(keyHash: string, principal: Principal | null): void {
    const now = this.now();
    this.entries.delete(keyHash);
    this.entries.set(keyHash, {
      principal,
      storedAt: now,
      expiresAt: now + (principal ? this.ttlMs : this.negativeTtlMs),
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  delete(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
