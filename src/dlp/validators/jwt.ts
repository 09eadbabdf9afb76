/**
 * A JSON Web Token: three base64url parts, the first two JSON objects, the
 * header naming an algorithm (`alg`). Decoding proves the structure; the
 * signature is not (and cannot be) checked.
 */
export function jwtValid(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const header = decodeJsonObject(parts[0] ?? '');
  if (!header || typeof header.alg !== 'string') return false;
  return decodeJsonObject(parts[1] ?? '') !== undefined;
}

function decodeJsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
