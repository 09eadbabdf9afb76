/** Who is calling: the result of authenticating a gateway key. */
export interface Principal {
  /** SHA-256 of the key (hex). Identifies the key without revealing it. */
  keyHash: string;
  /** Owner id; partitions caches and appears in logs instead of the key. */
  owner: string;
  /** Masked key for statistics (`gw_abc…wxyz`). */
  maskedKey: string;
  admin: boolean;
  /**
   * Whether this key may use a configured model (per-key model restrictions).
   * Routing asks it before trying a fallback model, configured or passed by
   * the client. Undefined: the key may use every configured model.
   */
  mayUseModel?: (model: string) => boolean;
}

/** Resolves a presented key to a principal; `undefined` when unknown or revoked. */
export interface KeyAuthenticator {
  authenticate(key: string): Promise<Principal | undefined>;
}
