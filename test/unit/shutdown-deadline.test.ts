import { describe, expect, it } from 'vitest';
import { ShutdownDeadline } from '../../src/process/shutdown-deadline.ts';

describe('ShutdownDeadline', () => {
  it('a step that settles in time is done; one that hangs is given up at the deadline and named', async () => {
    const deadline = new ShutdownDeadline(300);
    expect(await deadline.step('quick', () => new Promise((r) => setTimeout(r, 10)))).toBe(true);
    expect(await deadline.step('fails', () => Promise.reject(new Error('Redis is away')))).toBe(true);
    const t0 = Date.now();
    expect(await deadline.step('hangs', () => new Promise(() => {}))).toBe(false);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline.endsAt - 5);
    expect(Date.now() - t0).toBeLessThan(600);
    expect(deadline.unfinished).toEqual(['hangs']);
    expect(deadline.remainingMs).toBe(0);
    // Past the deadline a step gets no time at all.
    expect(await deadline.step('late', () => new Promise(() => {}))).toBe(false);
    expect(deadline.unfinished).toEqual(['hangs', 'late']);
  });

  it('a step may be given less than the whole grace, never more', async () => {
    const deadline = new ShutdownDeadline(400);
    const t0 = Date.now();
    expect(await deadline.step('short', () => new Promise(() => {}), t0 + 50)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(300);
    expect(await deadline.step('capped', () => new Promise(() => {}), t0 + 60_000)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(900);
  });
});
