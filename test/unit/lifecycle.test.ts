import { describe, expect, it } from 'vitest';
import { Lifecycle } from '../../src/process/lifecycle.ts';
import { ShutdownDeadline } from '../../src/process/shutdown-deadline.ts';

describe('Lifecycle', () => {
  it('starts nothing while building, then every part in building order; closes in reverse', async () => {
    const events: string[] = [];
    const lifecycle = new Lifecycle();
    for (const name of ['redis', 'cache', 'runner'])
      lifecycle.add({ name, start: () => events.push(`start ${name}`), close: () => events.push(`close ${name}`) });
    lifecycle.add({ name: 'no-op' });
    expect(events).toEqual([]);
    lifecycle.start();
    expect(events).toEqual(['start redis', 'start cache', 'start runner']);
    expect(await lifecycle.close(new ShutdownDeadline(1_000))).toEqual([]);
    expect(events.slice(3)).toEqual(['close runner', 'close cache', 'close redis']);
  });

  it('refuses a part built after the start', () => {
    const lifecycle = new Lifecycle();
    lifecycle.start();
    expect(() => lifecycle.add({ name: 'late' })).toThrow(/'late' was built after the process started/);
  });

  it('gives up on a close that hangs at its own limit and still closes the parts after it; reports it unfinished', async () => {
    const closed: string[] = [];
    const lifecycle = new Lifecycle();
    lifecycle.add({ name: 'redis', close: () => closed.push('redis') });
    lifecycle.add({
      name: 'jobs',
      close: () => new Promise(() => {}),
      closeUntil: (deadline) => deadline.endsAt - 1_800,
    });
    const started = Date.now();
    const unfinished = await lifecycle.close(new ShutdownDeadline(2_000));
    expect(unfinished).toEqual(['jobs']);
    expect(closed).toEqual(['redis']);
    // Its own limit (about 200 ms), not the whole grace.
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('hears of a start that failed later, and starts the other parts', async () => {
    const failures: string[] = [];
    const lifecycle = new Lifecycle((name) => failures.push(name));
    let second = false;
    lifecycle.add({ name: 'model', start: () => Promise.reject(new Error('no model')) });
    lifecycle.add({ name: 'loop', start: () => (second = true) });
    lifecycle.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(true);
    expect(failures).toEqual(['model']);
  });
});
