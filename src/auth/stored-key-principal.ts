import { principalOf } from './gateway-authenticator.ts';
import type { KeyStore } from './key-store.ts';
import { createPrincipal, type Principal } from './principal.ts';

/**
 * The principal of work stored under a key and run later (batch lines,
 * asynchronous jobs): the issued key as it stands now (a revoked or deleted
 * key has none), or for a static key the owner alone, which has no limits
 * beyond the rate limit its requests already passed.
 */
export function storedKeyPrincipals(
  store: KeyStore,
): (keyId: string | undefined, owner: string) => Promise<Principal | undefined> {
  return async (keyId, owner) => {
    if (keyId === undefined) return createPrincipal({ keyHash: '', owner, maskedKey: '', admin: false });
    const record = await store.findById(keyId);
    return record && !record.revoked ? principalOf(record) : undefined;
  };
}
