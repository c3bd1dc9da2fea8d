/**
 * Polled pending objects (src/cache/poll-watches.ts): one reconciler watch per key and object while polls
 * last, ended when they stop, bounded; and a re-read evicts unless it finds what the polls saw.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPollWatches, type PolledTarget } from '../../../src/cache/poll-watches.js';
import { createLogger } from '../../../src/logger.js';
import type { TransactionModel } from '../../../src/upstream/index.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const tx = (id: number, status = 'pending', updated_at = '2026-12-01T10:00:00Z', account_id: number | null = 7) => ({ id, status, updated_at, account_id }) as unknown as TransactionModel;

function setup(bounds = { max: 10, perCaller: 5, idleMs: 1_000 }) {
  const watched: PolledTarget[] = [];
  const ended: number[] = [];
  const evicted: string[] = [];
  const polls = createPollWatches({ evict: async (kind, id) => void evicted.push(`${kind}:${id}`), logger: createLogger('silent'), bounds });
  polls.start((target) => {
    watched.push(target);
    return () => ended.push(target.id);
  });
  return { polls, watched, ended, evicted };
}

describe('poll watches', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('watches a polled object once per key, with that key and the object\'s account, until polls stop', () => {
    const { polls, watched, ended } = setup();
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    polls.polled(B, 'sk_b', 'transaction', tx(1));
    expect(watched.map((t) => [t.apiKey, t.accountId, t.kind, t.id])).toEqual([
      ['sk_a', 7, 'transaction', 1],
      ['sk_b', 7, 'transaction', 1],
    ]);
    expect(watched[0]!.isFinal('canceled')).toBe(true);
    expect(watched[0]!.isFinal('pending')).toBe(false);
    // A keeps polling, B stops.
    vi.advanceTimersByTime(600);
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    vi.advanceTimersByTime(600);
    expect(ended).toEqual([1]);
    expect(polls.stats().watched).toBe(1);
    vi.advanceTimersByTime(1_000);
    expect(ended).toEqual([1, 1]);
    expect(polls.stats().watched).toBe(0);
  });

  it('watches nothing for an object with no account, before the reconciler exists, or past its bounds', () => {
    const { polls, watched } = setup({ max: 3, perCaller: 2, idleMs: 1_000 });
    polls.polled(A, 'sk_a', 'transaction', tx(1, 'pending', 'x', null));
    for (let id = 2; id <= 4; id++) polls.polled(A, 'sk_a', 'transaction', tx(id));
    polls.polled(B, 'sk_b', 'payout', tx(5));
    polls.polled(B, 'sk_b', 'payout', tx(6));
    expect(watched.map((t) => t.id)).toEqual([2, 3, 5]);
    const early = createPollWatches({ evict: async () => undefined, logger: createLogger('silent') });
    early.polled(A, 'sk_a', 'transaction', tx(1));
    expect(early.stats().watched).toBe(0);
  });

  it('evicts at a re-read that finds the object otherwise than the polls saw it, or gone, or not polled here', async () => {
    const { polls, evicted } = setup();
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    await polls.reread('transaction', 1, tx(1));
    expect(evicted).toEqual([]);
    await polls.reread('transaction', 1, tx(1, 'pending', '2026-12-01T10:00:05Z'));
    expect(evicted).toEqual(['transaction:1']);
    // Now known as re-read: the same again is no change.
    await polls.reread('transaction', 1, tx(1, 'pending', '2026-12-01T10:00:05Z'));
    await polls.reread('transaction', 1, tx(1, 'approved', '2026-12-01T10:00:05Z'));
    await polls.reread('transaction', 1, null);
    await polls.reread('transaction', 9, tx(9));
    expect(evicted).toEqual(['transaction:1', 'transaction:1', 'transaction:1', 'transaction:9']);
  });

  it('ends every watch when closed', () => {
    const { polls, ended } = setup();
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    polls.polled(B, 'sk_b', 'transaction', tx(2));
    polls.close();
    expect(ended.sort()).toEqual([1, 2]);
    polls.polled(A, 'sk_a', 'transaction', tx(3));
    expect(polls.stats().watched).toBe(0);
  });

  it('takes what each poll saw as the version a re-read compares with, whoever polled', async () => {
    const { polls, evicted } = setup();
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    // Another key's poll of the same object, already watched by both: the newer state it saw is no news to a re-read.
    polls.polled(B, 'sk_b', 'transaction', tx(1));
    polls.polled(B, 'sk_b', 'transaction', tx(1, 'pending', '2026-12-01T10:00:07Z'));
    await polls.reread('transaction', 1, tx(1, 'pending', '2026-12-01T10:00:07Z'));
    expect(evicted).toEqual([]);
    await polls.reread('transaction', 1, tx(1));
    expect(evicted).toEqual(['transaction:1']);
  });

  it('forgets an object whose watches all ended, and gives the key its share back', async () => {
    const { polls, watched, evicted } = setup({ max: 10, perCaller: 1, idleMs: 1_000 });
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    polls.polled(A, 'sk_a', 'transaction', tx(2));
    expect(watched.map((t) => t.id)).toEqual([1]);
    vi.advanceTimersByTime(1_000);
    expect(polls.stats().watched).toBe(0);
    // No poll watches it any more: a re-read that finds what the last poll saw evicts all the same.
    await polls.reread('transaction', 1, tx(1));
    expect(evicted).toEqual(['transaction:1']);
    polls.polled(A, 'sk_a', 'transaction', tx(2));
    expect(watched.map((t) => t.id)).toEqual([1, 2]);
  });

  it('logs a failed eviction after a re-read, and the re-read still settles', async () => {
    const lines: string[] = [];
    const logger = createLogger('warn', { destination: { write: (line: string) => void lines.push(line) } });
    const failing = createPollWatches({ evict: () => Promise.reject(new Error('store down')), logger });
    await failing.reread('transaction', 4, null);
    const failingText = createPollWatches({ evict: () => Promise.reject('just text'), logger });
    await failingText.reread('payout', 5, null);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { level: 40, msg: 'entity cache eviction after a re-read failed', err: { message: 'store down' }, object: 'transaction', id: 4 },
      { level: 40, msg: 'entity cache eviction after a re-read failed', err: { message: 'just text' }, object: 'payout', id: 5 },
    ]);
  });

  it('keeps an object while one key still polls it, and hands back one place per ended watch', async () => {
    const { polls, watched, evicted } = setup({ max: 10, perCaller: 2, idleMs: 1_000 });
    polls.polled(A, 'sk_a', 'transaction', tx(1));
    polls.polled(A, 'sk_a', 'transaction', tx(2));
    polls.polled(B, 'sk_b', 'transaction', tx(2));
    vi.advanceTimersByTime(600);
    polls.polled(A, 'sk_a', 'transaction', tx(2));
    vi.advanceTimersByTime(600);
    // A's watch of 1 and B's of 2 ended; A still watches 2, and a re-read finding what it saw is no change.
    expect(polls.stats().watched).toBe(1);
    await polls.reread('transaction', 2, tx(2));
    expect(evicted).toEqual([]);
    polls.polled(A, 'sk_a', 'transaction', tx(3));
    polls.polled(A, 'sk_a', 'transaction', tx(4));
    expect(watched.map((t) => `${t.apiKey}:${t.id}`)).toEqual(['sk_a:1', 'sk_a:2', 'sk_b:2', 'sk_a:3']);
  });
});
