import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';
import { ipv4Scope, ipv6Scope, type IpScope } from '../validators/ip-address.ts';

/**
 * IPv4 and IPv6 addresses, validated by parsing (octets 0-255 without
 * leading zeros; IPv6 through Node's parser, with at least one digit and two
 * groups, so C++ scopes like `Cafe::Bad`, times and MAC addresses are not taken).
 *
 * Scores: a public or private address 0.85; loopback and unspecified
 * addresses (127.0.0.1, ::1, 0.0.0.0) 0.3, since they say nothing about a
 * person or a network and fill every code sample; "version", "section" and
 * similar words right before an address take 0.35 off (1.2.3.4 as a version).
 */

const SCORES: Record<IpScope, number> = { routable: 0.85, private: 0.85, loopback: 0.3, unspecified: 0.3, invalid: 0 };

/**
 * `(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}…` with its first digit before the lookbehind: the same
 * matches, but the engine looks for a digit first instead of testing the lookbehind at every character.
 */
const IPV4 = /\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?![\w]|\.\d)/g;
/** Anchored where a candidate starts; see {@link IpAddressRecognizer.scanIpv6}. */
const IPV6 = /(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?:%[\w.]+)?(?![\w:])/y;
const MAX_IPV6_LENGTH = 45;

function isHexOrColon(code: number): boolean {
  return (code >= 48 && code <= 58) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

function isWordOrDot(code: number): boolean {
  return (
    (code >= 48 && code <= 57) ||
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    code === 95 ||
    code === 46
  );
}

export class IpAddressRecognizer implements Recognizer {
  readonly name = 'ip-address';
  readonly entities = ['IP_ADDRESS'] as const;
  readonly context: ContextRule = {
    positive: ['ip', 'ips', 'ipv4', 'ipv6', 'address*', 'host*', 'server', 'client', 'login', 'from'],
    negative: [
      'version*',
      'v',
      'ver',
      'release*',
      'build',
      'section',
      'chapter',
      'figure',
      'table',
      'step',
      'rule',
      'clause',
      'paragraph',
    ],
  };

  analyze(text: string, out: Candidate[]): void {
    this.scanIpv4(text, out);
    if (text.includes(':')) this.scanIpv6(text, out);
  }

  private scanIpv4(text: string, out: Candidate[]): void {
    IPV4.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = IPV4.exec(text)) !== null) {
      const score = SCORES[ipv4Scope(match[0])];
      if (score > 0) out.push(this.candidate(match.index, match[0], score));
      else IPV4.lastIndex = match.index + 1;
    }
  }

  /**
   * A regex over the whole text would try an address at every letter a-f;
   * instead jump from colon to colon, back up over the hex digits and colons
   * before it, and try the expression there once.
   */
  private scanIpv6(text: string, out: Candidate[]): void {
    let scannedTo = 0;
    for (let colon = text.indexOf(':'); colon !== -1; colon = text.indexOf(':', colon + 1)) {
      if (colon < scannedTo) continue;
      let start = colon;
      while (start > 0 && colon - start < MAX_IPV6_LENGTH && isHexOrColon(text.charCodeAt(start - 1))) start--;
      if (start > 0 && (isWordOrDot(text.charCodeAt(start - 1)) || text.charCodeAt(start - 1) === 58)) {
        scannedTo = colon + 1;
        continue;
      }
      IPV6.lastIndex = start;
      const match = IPV6.exec(text);
      if (match === null) {
        scannedTo = colon + 1;
        continue;
      }
      const value = match[0];
      scannedTo = start + value.length;
      if (!/\d/.test(value) || value.split(':').filter((g) => g.length > 0).length < 2) continue;
      const score = SCORES[ipv6Scope(value)];
      if (score > 0) out.push(this.candidate(start, value, score));
    }
  }

  private candidate(start: number, value: string, score: number): Candidate {
    return {
      entity: 'IP_ADDRESS',
      start,
      end: start + value.length,
      score,
      key: value.toLowerCase(),
      recognizer: this.name,
    };
  }
}
