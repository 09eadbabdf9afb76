import { describe, expect, it } from 'vitest';
import { cardIssuer } from '../../src/dlp/validators/card-issuers.ts';
import { IBAN_LENGTHS, ibanChecksumValid, ibanValid } from '../../src/dlp/validators/iban.ts';
import { ipv4Scope, ipv6Scope } from '../../src/dlp/validators/ip-address.ts';
import { jwtValid } from '../../src/dlp/validators/jwt.ts';
import { luhnValid } from '../../src/dlp/validators/luhn.ts';
import { ssnValid } from '../../src/dlp/validators/us-ssn.ts';

describe('luhn', () => {
  it('accepts the published test card numbers', () => {
    for (const n of [
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '6011111111111117',
      '3530111333300000',
      '30569309025904',
    ]) {
      expect(luhnValid(n), n).toBe(true);
    }
  });
  it('rejects one changed digit, non-digits and the empty string', () => {
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('4111a11111111111')).toBe(false);
    expect(luhnValid('')).toBe(false);
  });
});

describe('card issuers', () => {
  it('knows the networks by prefix and length', () => {
    expect(cardIssuer('4111111111111111')).toBe('visa');
    expect(cardIssuer('5555555555554444')).toBe('mastercard');
    expect(cardIssuer('2221000000000009')).toBe('mastercard');
    expect(cardIssuer('378282246310005')).toBe('amex');
    expect(cardIssuer('6011111111111117')).toBe('discover');
    expect(cardIssuer('3530111333300000')).toBe('jcb');
    expect(cardIssuer('30569309025904')).toBe('diners');
  });
  it('rejects unknown prefixes and wrong lengths', () => {
    expect(cardIssuer('9111111111111111')).toBeUndefined();
    expect(cardIssuer('37828224631000')).toBeUndefined(); // amex is 15 digits
    expect(cardIssuer('411111111111111')).toBeUndefined(); // visa is 13, 16 or 19
  });
});

describe('iban', () => {
  it('accepts valid IBANs of several countries', () => {
    for (const iban of [
      'DE89370400440532013000',
      'GB82WEST12345698765432',
      'FR1420041010050500013M02606',
      'NL91ABNA0417164300',
      'BE68539007547034',
      'NO9386011117947',
    ]) {
      expect(ibanValid(iban), iban).toBe(true);
    }
  });
  it('rejects a wrong check digit, a wrong length and an unknown country', () => {
    expect(ibanValid('DE88370400440532013000')).toBe(false);
    expect(ibanValid('DE8937040044053201300')).toBe(false);
    expect(ibanValid('XX89370400440532013000')).toBe(false);
    expect(ibanChecksumValid('DE89 3704')).toBe(false);
  });
  it('lists the registry lengths', () => {
    expect(IBAN_LENGTHS.DE).toBe(22);
    expect(IBAN_LENGTHS.NO).toBe(15);
    expect(IBAN_LENGTHS.MT).toBe(31);
  });
});

describe('us ssn', () => {
  it('accepts numbers that follow the SSA rules', () => {
    expect(ssnValid('219099998')).toBe(true);
    expect(ssnValid('536221234')).toBe(true);
  });
  it('rejects area 000, 666 and 9xx, group 00, serial 0000 and known samples', () => {
    for (const n of [
      '000121234',
      '666121234',
      '912121234',
      '536001234',
      '536220000',
      '078051120',
      '123456789',
      '987654321',
      '987654325',
      '111111111',
    ]) {
      expect(ssnValid(n), n).toBe(false);
    }
  });
});

describe('ip addresses', () => {
  it('classifies IPv4 addresses', () => {
    expect(ipv4Scope('203.0.113.42')).toBe('routable');
    expect(ipv4Scope('192.168.1.20')).toBe('private');
    expect(ipv4Scope('10.0.0.1')).toBe('private');
    expect(ipv4Scope('172.16.5.4')).toBe('private');
    expect(ipv4Scope('127.0.0.1')).toBe('loopback');
    expect(ipv4Scope('0.0.0.0')).toBe('unspecified');
  });
  it('rejects octets over 255, leading zeros and wrong part counts', () => {
    for (const s of ['256.1.1.1', '1.2.3.999', '01.2.3.4', '1.2.3', '1.2.3.4.5'])
      expect(ipv4Scope(s), s).toBe('invalid');
  });
  it('classifies IPv6 addresses through the Node parser', () => {
    expect(ipv6Scope('2001:db8::8a2e:370:7334')).toBe('routable');
    expect(ipv6Scope('fe80::1%eth0')).toBe('private');
    expect(ipv6Scope('fd00::1')).toBe('private');
    expect(ipv6Scope('::1')).toBe('loopback');
    expect(ipv6Scope('::')).toBe('unspecified');
    expect(ipv6Scope('2001:db8:::1')).toBe('invalid');
    expect(ipv6Scope('12:30:45')).toBe('invalid');
    expect(ipv6Scope('00:1A:2B:3C:4D:5E')).toBe('invalid');
  });
});

describe('jwt', () => {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  it('accepts a token whose header names an alg and whose payload is JSON', () => {
    expect(jwtValid(`${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: '1' })}.c2ln`)).toBe(true);
    expect(jwtValid(`${part({ alg: 'none' })}.${part({ sub: '1' })}.`)).toBe(true);
  });
  it('rejects a header without alg, a non-JSON payload and the wrong number of parts', () => {
    expect(jwtValid(`${part({ typ: 'JWT' })}.${part({ sub: '1' })}.c2ln`)).toBe(false);
    expect(jwtValid(`${part({ alg: 'HS256' })}.eyJub3Q.c2ln`)).toBe(false);
    expect(jwtValid(`${part({ alg: 'HS256' })}.${part({ sub: '1' })}`)).toBe(false);
  });
});
