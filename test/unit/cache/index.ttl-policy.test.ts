/**
 * The entity cache takes its TTL policy from the payment rules once, when it is made
 * (src/cache/index.ts, entityTtlPolicy): a read tests the statuses it was given and
 * asks the rules nothing more. The rules module is watched here.
 */
import { describe, expect, it, vi } from 'vitest';

const asked = vi.hoisted(() => ({ finalStatuses: 0, isFinal: 0 }));
vi.mock('../../../src/payments/rules.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/payments/rules.js')>();
  return {
    ...real,
    finalStatuses: () => (asked.finalStatuses++, real.finalStatuses()),
    isFinalTransaction: (status: string) => (asked.isFinal++, real.isFinalTransaction(status)),
    isFinalPayout: (status: string) => (asked.isFinal++, real.isFinalPayout(status)),
  };
});

const { createEntityCache, memoryStore } = await import('../../../src/cache/index.js');
const { createLogger } = await import('../../../src/logger.js');

describe('entity cache TTL policy', () => {
  it('is read from the payment rules once, when the cache is made, and not on each read', async () => {
    const cache = createEntityCache(memoryStore(100), { customerTtlMs: 1_000, currencyTtlMs: 1_000, finalTtlMs: 1_000 }, createLogger('silent'));
    expect(asked.finalStatuses).toBe(1);
    const scope = cache.scope('c'.repeat(32));
    const statuses = ['canceled', 'pending', 'APPROVED', 'Refunded'];
    const read = await scope.load('transaction', [1, 2, 3, 4], async (id) => ({ id, status: statuses[Number(id) - 1]! }) as never);
    // Served from the cache on the way out only when final: the policy still decides, from what it was given.
    const again = await scope.load('transaction', [1, 2, 3, 4], async () => {
      throw new Error('read again');
    });
    await scope.load('payout', [9], async () => ({ id: 9, status: 'sent' }) as never);
    expect(read.map((t) => (t as { status: string }).status)).toEqual(statuses);
    expect(again.map((t) => (t instanceof Error ? 'read again' : (t as { status: string }).status))).toEqual(['canceled', 'read again', 'read again', 'Refunded']);
    expect(asked).toEqual({ finalStatuses: 1, isFinal: 0 });
  });
});
