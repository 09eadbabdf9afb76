import { hashApiKey, maskApiKey } from './api-key.ts';
import { createPrincipal, type KeyAuthenticator, type Principal } from './principal.ts';

/**
 * Keys from the environment: `API_KEYS` (clients) and `ADMIN_API_KEYS`
 * (admins). Held as hashes only; the owner of such a key is
 * `env:<first 12 hex of its hash>`.
 */
export class StaticKeyAuthenticator implements KeyAuthenticator {
  private readonly principals = new Map<string, Principal>();

  constructor(keys: readonly string[], adminKeys: readonly string[]) {
    for (const key of keys) this.add(key, false);
    for (const key of adminKeys) this.add(key, true);
  }

  private add(key: string, admin: boolean): void {
    const keyHash = hashApiKey(key);
    const existing = this.principals.get(keyHash);
    this.principals.set(
      keyHash,
      createPrincipal({
        keyHash,
        owner: `env:${keyHash.slice(0, 12)}`,
        maskedKey: maskApiKey(key),
        admin: admin || (existing?.admin ?? false),
      }),
    );
  }

  get size(): number {
    return this.principals.size;
  }

  /** The principal of an already hashed key. */
  lookup(keyHash: string): Principal | undefined {
    return this.principals.get(keyHash);
  }

  async authenticate(key: string): Promise<Principal | undefined> {
    return this.principals.get(hashApiKey(key));
  }
}
