import { describe, expect, it } from 'vitest';
import { AsyncJobIds } from '../../src/batches/async-job-id.ts';

describe('asynchronous job ids', () => {
  const ids = new AsyncJobIds('a secret');
  const at = Date.UTC(2026, 10, 24, 12, 0, 0);

  it('carry their creation time, readable back only for the owner they were minted for', () => {
    const id = ids.mint('env:owner-a', at);
    expect(id).toMatch(/^cjob_[0-9a-f]{48}$/);
    expect(ids.createdAt(id, 'env:owner-a')).toBe(at / 1000);
    expect(ids.createdAt(id, 'env:owner-b')).toBeUndefined();
  });

  it('are all different, even within one second', () => {
    const minted = new Set(Array.from({ length: 1000 }, () => ids.mint('o', at)));
    expect(minted.size).toBe(1000);
  });

  it('reject any changed digit, made-up ids, the old format, and ids minted with another secret', () => {
    const id = ids.mint('o', at);
    for (let i = 'cjob_'.length; i < id.length; i++) {
      const digit = id[i] === '0' ? '1' : '0';
      expect(ids.createdAt(`${id.slice(0, i)}${digit}${id.slice(i + 1)}`, 'o')).toBeUndefined();
    }
    expect(ids.createdAt('cjob_nope', 'o')).toBeUndefined();
    expect(ids.createdAt(`cjob_${'0'.repeat(48)}`, 'o')).toBeUndefined();
    expect(ids.createdAt('cjob_4f0c1d2e3a4b5c6d7e8f90a1b2c3d4e5', 'o')).toBeUndefined();
    expect(new AsyncJobIds('another secret').createdAt(id, 'o')).toBeUndefined();
    expect(new AsyncJobIds(undefined).createdAt(id, 'o')).toBeUndefined();
  });

  it('without a secret, still tell minted ids from others', () => {
    const open = new AsyncJobIds(undefined);
    const id = open.mint('o', at);
    expect(open.createdAt(id, 'o')).toBe(at / 1000);
    expect(
      open.createdAt(
        id.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
        'o',
      ),
    ).toBeUndefined();
  });
});
