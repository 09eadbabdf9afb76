import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { verifyCandidate } from '../../src/cache/prompt-verifier.ts';

/** The verifier's verdict on `next` given a cached `cached`, both as the cache sees them: `ok` or the rejection's reason. */
export function verdict(cached: string, next: string): string {
  const v = verifyCandidate(canonicalPrompt(cached).tokens, canonicalPrompt(next).tokens);
  return v.ok ? 'ok' : v.reason;
}
