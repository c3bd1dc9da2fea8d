import { describe, expect, it } from 'vitest';
import { InFlight, MAX_IN_FLIGHT_PER_CALLER } from '../../../src/idempotency/in-flight.js';

/** A run that settles when told, counting how often it started. */
function gate() {
  let started = 0;
  let settle!: (v: string) => void;
  let fail!: (e: Error) => void;
  const done = new Promise<string>((resolve, reject) => ((settle = resolve), (fail = reject)));
  return { run: () => (started++, done), settle: (v: string) => settle(v), fail: (e: Error) => fail(e), started: () => started };
}

describe('InFlight', () => {
  it('runs identical calls of one caller once, shares the result, and keeps nothing after', async () => {
    const inFlight = new InFlight();
    const g = gate();
    const calls = [1, 2, 3].map(() => inFlight.join('caller', 'fp', g.run));
    expect(g.started()).toBe(1);
    expect(inFlight.size).toBe(1);
    g.settle('sent');
    expect(await Promise.all(calls)).toEqual(['sent', 'sent', 'sent']);
    expect(inFlight.size).toBe(0);
  });

  it('shares an error too, then lets the next call run', async () => {
    const inFlight = new InFlight();
    const g = gate();
    const calls = [1, 2].map(() => inFlight.join('caller', 'fp', g.run));
    g.fail(new Error('upstream 500'));
    for (const c of calls) await expect(c).rejects.toThrow('upstream 500');
    expect(inFlight.size).toBe(0);
    await expect(inFlight.join('caller', 'fp', async () => 'again')).resolves.toBe('again');
  });

  it('keeps callers and fingerprints apart, and holds at most its cap per caller', async () => {
    const inFlight = new InFlight();
    const g = gate();
    void inFlight.join('a', 'fp', g.run);
    void inFlight.join('b', 'fp', g.run);
    void inFlight.join('a', 'other', g.run);
    expect(g.started()).toBe(3);
    for (let i = 0; i < MAX_IN_FLIGHT_PER_CALLER; i++) void inFlight.join('flood', `fp-${i}`, g.run);
    expect(inFlight.size).toBe(3 + MAX_IN_FLIGHT_PER_CALLER);
    // Over the cap: it runs on its own, remembered nowhere.
    void inFlight.join('flood', 'one-more', g.run);
    expect(inFlight.size).toBe(3 + MAX_IN_FLIGHT_PER_CALLER);
    g.settle('done');
    await new Promise((r) => setTimeout(r, 0));
    expect(inFlight.size).toBe(0);
  });
});
