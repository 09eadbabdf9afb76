import { isIPv6 } from 'node:net';

/** Where an address points: only `routable` and `private` addresses say anything about a person or a network. */
export type IpScope = 'routable' | 'private' | 'loopback' | 'unspecified' | 'invalid';

/** Four decimal octets 0-255, without leading zeros (which read as octal to some parsers and as versions to people). */
export function ipv4Scope(text: string): IpScope {
  const parts = text.split('.');
  if (parts.length !== 4) return 'invalid';
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || (part.length > 1 && part.startsWith('0'))) return 'invalid';
    const n = Number(part);
    if (n > 255) return 'invalid';
    octets.push(n);
  }
  const [a = 0, b = 0] = octets;
  if (a === 127) return 'loopback';
  if (octets.every((o) => o === 0)) return 'unspecified';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  return 'routable';
}

/** An IPv6 address as Node's parser accepts it (zone ids such as `%eth0` removed first). */
export function ipv6Scope(text: string): IpScope {
  const address = text.split('%')[0] ?? '';
  if (!isIPv6(address)) return 'invalid';
  const lower = address.toLowerCase();
  if (lower === '::1') return 'loopback';
  if (/^[0:]+$/.test(lower)) return 'unspecified';
  if (/^f[cd]/.test(lower) || lower.startsWith('fe80')) return 'private';
  return 'routable';
}
