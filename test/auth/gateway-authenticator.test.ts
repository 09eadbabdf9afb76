import { describe, expect, it } from 'vitest';
import { GatewayAuthenticator } from '../../src/auth/gateway-authenticator.ts';
import { INVALIDATE_ALL } from '../../src/auth/key-invalidation.ts';
import { issueApiKey, type ApiKeyRecord, type KeyStore } from '../../src/auth/key-store.ts';
import { SqliteKeyStore } from '../../src/auth/sqlite-key-store.ts';
import { StaticKeyAuthenticator } from '../../src/auth/static-key-authenticator.ts';
import { InvalidApiKeyError, ServiceUnavailableError } from '../../src/errors/catalog.ts';
import { mergeKeyPolicy } from '../../src/auth/key-policy.ts';

/** A real SQLite store that counts lookups and can be made to fail. */
class ObservedStore extends SqliteKeyStore {
  lookups = 0;
  down = false;
  override async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    this.lookups++;
    if (this.down) throw new Error('database is down');
    return super.findByHash(keyHash);
  }
}

function setup(options: { ttlMs?: number; staleIfErrorMs?: number } = {}) {
  let now = 1_000_000;
  const store = new ObservedStore({ path: ':memory:' });
  const auth = new GatewayAuthenticator({
    staticKeys: new StaticKeyAuthenticator(['env-key'], ['env-admin']),
    store,
    cacheTtlMs: options.ttlMs ?? 30_000,
    ...(options.staleIfErrorMs !== undefined ? { staleIfErrorMs: options.staleIfErrorMs } : {}),
    now: () => now,
  });
  return { store, auth, advance: (ms: number) => (now += ms) };
}

async function issue(store: KeyStore, owner: string, admin = false) {
  return issueApiKey(store, { owner, admin });
}

describe('GatewayAuthenticator', () => {
  it('accepts API_KEYS and ADMIN_API_KEYS without asking the store', async () => {
    const { auth, store } = setup();
    expect((await auth.authenticate('env-key'))?.admin).toBe(false);
    expect((await auth.authenticate('env-admin'))?.admin).toBe(true);
    expect(store.lookups).toBe(0);
  });

  it('accepts an issued key with its owner and admin flag, masked', async () => {
    const { auth, store } = setup();
    const { key, record } = await issue(store, 'alice', true);
    const principal = await auth.authenticate(key);
    expect(principal).toMatchObject({
      keyHash: record.keyHash,
      owner: 'alice',
      maskedKey: record.maskedKey,
      admin: true,
      keyId: record.id,
    });
    expect(principal?.maskedKey).not.toContain(key.slice(6, -4));
    // No policy: nothing for the hot path to check, every model allowed.
    expect(principal?.policy).toBeUndefined();
    expect(principal?.mayUseModel('anything-at-all')).toBe(true);
  });

  it('carries the key policy: allowed model patterns, and 401 with the expiry time once expired (cached or not)', async () => {
    const { auth, store, advance } = setup();
    const expiresAt = new Date(1_000_000 + 60_000).toISOString();
    const { key } = await issueApiKey(store, {
      owner: 'frank',
      policy: mergeKeyPolicy({}, { allowed_models: ['a-4o', 'b-*'], expires_at: expiresAt }),
    });
    const principal = await auth.authenticate(key);
    expect(principal?.policy?.allowed_models).toEqual(['a-4o', 'b-*']);
    expect(['a-4o', 'a-4o-mini', 'b-1', 'b-', 'c-1', 'xa-4o'].map((m) => principal!.mayUseModel(m))).toEqual([
      true,
      false,
      true,
      true,
      false,
      false,
    ]);
    advance(60_000);
    const err = await auth.authenticate(key).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidApiKeyError);
    expect((err as Error).message).toBe(`This API key expired at ${expiresAt}.`);
    // After the cache TTL, the fresh lookup says the same.
    advance(60_000);
    await expect(auth.authenticate(key)).rejects.toThrow('expired');
  });

  it('never sends a key that is not shaped like an issued key to the store', async () => {
    const { auth, store } = setup();
    expect(await auth.authenticate('random garbage')).toBeUndefined();
    expect(await auth.authenticate('gw_short')).toBeUndefined();
    expect(store.lookups).toBe(0);
  });

  it('asks the store once per key per TTL, and shares concurrent lookups', async () => {
    const { auth, store, advance } = setup({ ttlMs: 10_000 });
    const { key } = await issue(store, 'bob');
    await Promise.all([auth.authenticate(key), auth.authenticate(key), auth.authenticate(key)]);
    expect(store.lookups).toBe(1);
    await auth.authenticate(key);
    expect(store.lookups).toBe(1);
    advance(10_001);
    await auth.authenticate(key);
    expect(store.lookups).toBe(2);
  });

  it('keeps accepting a revoked key until its entry is invalidated, then rejects it', async () => {
    const { auth, store } = setup({ ttlMs: 600_000 });
    const { key, record } = await issue(store, 'carol');
    expect(await auth.authenticate(key)).toBeDefined();
    await store.revoke(record.id);
    // The TTL alone would keep it for ten minutes: the invalidation is what makes revocation immediate.
    expect(await auth.authenticate(key)).toBeDefined();
    auth.invalidate(record.keyHash);
    expect(await auth.authenticate(key)).toBeUndefined();
  });

  it('remembers unknown keys briefly, and INVALIDATE_ALL forgets everything', async () => {
    const { auth, store } = setup();
    const unknown = `gw_${'A'.repeat(43)}`;
    expect(await auth.authenticate(unknown)).toBeUndefined();
    expect(await auth.authenticate(unknown)).toBeUndefined();
    expect(store.lookups).toBe(1);
    auth.invalidate(INVALIDATE_ALL);
    await auth.authenticate(unknown);
    expect(store.lookups).toBe(2);
  });

  it('does not cache a lookup that raced an invalidation', async () => {
    const { auth, store } = setup({ ttlMs: 600_000 });
    const { key, record } = await issue(store, 'dan');
    const pending = auth.authenticate(key);
    auth.invalidate(record.keyHash);
    await pending;
    await auth.authenticate(key);
    expect(store.lookups).toBe(2);
  });

  it('when the store is down: a recently seen key still works, an unknown one gets 503, not 401', async () => {
    const { auth, store, advance } = setup({ ttlMs: 1_000, staleIfErrorMs: 60_000 });
    const { key } = await issue(store, 'erin');
    const { key: neverSeen } = await issue(store, 'frank');
    expect(await auth.authenticate(key)).toBeDefined();
    store.down = true;
    advance(5_000);
    expect((await auth.authenticate(key))?.owner).toBe('erin');
    await expect(auth.authenticate(neverSeen)).rejects.toBeInstanceOf(ServiceUnavailableError);
    advance(60_000);
    await expect(auth.authenticate(key)).rejects.toBeInstanceOf(ServiceUnavailableError);
    store.down = false;
    expect((await auth.authenticate(neverSeen))?.owner).toBe('frank');
  });
});
