import { modelMatcher, type KeyPolicy } from './key-policy.ts';

/** Who is calling: the result of authenticating a gateway key. */
export interface Principal {
  /** SHA-256 of the key (hex). Identifies the key without revealing it. */
  keyHash: string;
  /** Owner id; partitions caches and appears in logs instead of the key. */
  owner: string;
  /** Masked key for statistics (`gw_abc…wxyz`). */
  maskedKey: string;
  admin: boolean;
  /** Public id of an issued key (`key_…`); absent for `API_KEYS` / `ADMIN_API_KEYS`. */
  keyId?: string;
  /**
   * The key's own limits, present only when at least one is set: a key
   * without any is checked by the global settings alone and the hot path
   * pays nothing for this feature beyond reading `undefined`.
   */
  policy?: KeyPolicy;
  /** `expires_at` in ms, precomputed so the per-request check is one comparison. */
  expiresAtMs?: number;
  /**
   * Whether this key may call `model` (its `allowed_models` patterns; any
   * model when it has none). For routing and fallbacks as much as for the
   * chat route: a fallback outside the list must never be tried.
   */
  mayUseModel(model: string): boolean;
}

/** Resolves a presented key to a principal; `undefined` when unknown or revoked. */
export interface KeyAuthenticator {
  authenticate(key: string): Promise<Principal | undefined>;
}

const ANY_MODEL = (): boolean => true;

/** Builds a principal; the model patterns are compiled here, once per key lookup. */
export function createPrincipal(fields: Omit<Principal, 'mayUseModel' | 'expiresAtMs'>): Principal {
  const policy = fields.policy && Object.keys(fields.policy).length > 0 ? fields.policy : undefined;
  const principal: Principal = {
    keyHash: fields.keyHash,
    owner: fields.owner,
    maskedKey: fields.maskedKey,
    admin: fields.admin,
    mayUseModel: ANY_MODEL,
  };
  if (fields.keyId !== undefined) principal.keyId = fields.keyId;
  if (policy) {
    principal.policy = policy;
    if (policy.allowed_models) principal.mayUseModel = modelMatcher(policy.allowed_models);
    if (policy.expires_at) principal.expiresAtMs = Date.parse(policy.expires_at);
  }
  return principal;
}
