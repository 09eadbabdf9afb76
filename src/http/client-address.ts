import { isIPv6 } from 'node:net';
import type { Request } from 'express';

/**
 * The address a request is counted under by the failed-authentication
 * throttle.
 *
 * With `trustedProxies` = 0 (the default, `TRUST_PROXY`), the TCP peer: a
 * client cannot choose it. Behind n proxies that each append the address
 * they received from to `X-Forwarded-For`, the client is the entry n places
 * from the right of [...X-Forwarded-For, peer]; entries further left were
 * written by the client itself and are ignored. Set it to the number of
 * proxies in front of the gateway, never more: a larger value lets a client
 * pick its own address and escape the throttle.
 *
 * IPv6 addresses are grouped by their /64, the block a single client is
 * usually given, so walking through its addresses does not multiply its
 * guesses; IPv4-mapped IPv6 addresses count as the IPv4 address.
 */
export function clientAddress(req: Request, trustedProxies: number): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  let address = peer;
  if (trustedProxies > 0) {
    const forwarded = req.headers['x-forwarded-for'];
    const hops = (typeof forwarded === 'string' ? forwarded.split(',') : [])
      .map((hop) => hop.trim())
      .filter((hop) => hop !== '');
    hops.push(peer);
    address = hops[Math.max(0, hops.length - 1 - trustedProxies)] ?? peer;
  }
  return addressGroup(address);
}

/** An address as counted: IPv4 as is, IPv6 by its /64. */
export function addressGroup(address: string): string {
  const unmapped = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  const plain = unmapped.split('%')[0] ?? unmapped;
  if (!isIPv6(plain)) return unmapped;
  const [head = '', tail] = plain.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
