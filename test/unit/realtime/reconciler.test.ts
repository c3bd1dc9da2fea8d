/**
 * The reconciler on its own, over the in-memory bus and ledger, with a
 * reader standing in for the upstream: sharing, the rate cap, and what a
 * re-read publishes next to webhook events.
 */
import { describe, expect, it } from 'vitest';
import type { ReconcileSettings } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import { memoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { memoryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLog } from '../../../src/realtime/log.js';
import { soleLease } from '../../../src/realtime/poll-lease.js';
import { objectKey } from '../../../src/realtime/events.js';
import { createReconciler, type Snapshot } from '../../../src/realtime/reconciler.js';
import { Decimal } from '../../../src/upstream/decimal.js';
import { UpstreamAuthenticationError } from '../../../src/upstream/errors.js';
import { transactionModel } from '../../../src/upstream/models.js';
import { eventually } from '../../realtime/support.js';

const ACCOUNT = 7;
const logger = createLogger('silent');
const isFinal = (status: string) => status === 'declined';

function setup(settings: Partial<ReconcileSettings> = {}, revoked: ReadonlySet<string> = new Set()) {
  const bus = memoryBus(logger);
  const ledger = memoryLedger();
  const state = new Map<number, Snapshot>();
  const reads: number[] = [];
  const readers: string[] = [];
  const reconciler = createReconciler({
    settings: { initialMs: 20, maxMs: 20, jitter: 0, readsPerSecond: 1000, ...settings },
    bus,
    log: ledgerLog(ledger, bus),
    lease: soleLease,
    logger,
    read: async (key, _kind, id) => {
      readers.push(key);
      if (revoked.has(key)) throw new UpstreamAuthenticationError({ route: 'GET /v1/transactions/:id', statusCode: 401 });
      reads.push(id);
      return state.get(id) ?? null;
    },
  });
  const published: PaymentEvent[] = [];
  bus.subscribe(ACCOUNT, (e) => published.push(e));
  const set = (id: number, status: string, at: number) => state.set(id, { id, status, updated_at: new Date(at).toISOString() });
  const watch = (id: number, apiKey = 'sk_sandbox_a') => reconciler.watch({ accountId: ACCOUNT, kind: 'transaction', id, apiKey, isFinal });
  return { bus, ledger, reconciler, reads, readers, published, set, watch, state };
}

describe('the reconciler', () => {
  it('re-reads an object once per interval however many subscribers watch it, and stops when the last leaves', async () => {
    const t = setup();
    t.set(1, 'pending', 1000);
    const releases = [t.watch(1, 'sk_sandbox_a'), t.watch(1, 'sk_sandbox_b'), t.watch(1, 'sk_sandbox_c')];
    const startedAt = Date.now();
    await eventually(async () => t.reads.length, (n) => n >= 5);
    expect(t.reads.length).toBeLessThanOrEqual(Math.floor((Date.now() - startedAt) / 20) + 1);
    expect(t.reconciler.stats()).toMatchObject({ watched: 1, owned: 1 });
    for (const release of releases) release();
    expect(t.reconciler.stats().watched).toBe(0);
    const after = t.reads.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(t.reads.length).toBeLessThanOrEqual(after + 1);
    await t.reconciler.close();
  });

  it('keeps every object within the instance-wide rate cap, deferring the rest', async () => {
    const t = setup({ readsPerSecond: 20 });
    for (let id = 1; id <= 10; id += 1) {
      t.set(id, 'pending', 1000);
      t.watch(id);
    }
    const startedAt = Date.now();
    await eventually(async () => t.reconciler.stats().deferred, (n) => n > 0);
    await eventually(async () => t.reads.length, (n) => n >= 30, 5000);
    const seconds = (Date.now() - startedAt) / 1000;
    // A full bucket (20) to start, then 20 per second.
    expect(t.reads.length).toBeLessThanOrEqual(20 + Math.ceil(seconds * 20) + 1);
    await t.reconciler.close();
  });

  it('publishes a re-read state once, whether its webhook came first or after', async () => {
    const t = setup();
    t.set(1, 'pending', 1000);
    t.watch(1);
    // The re-read finds the approval first; the webhook of the same state comes later.
    t.set(1, 'approved', 2000);
    await eventually(async () => t.published.filter((e) => e.origin === 'snapshot' && e.entity?.status === 'approved').length, (n) => n === 1);
    expect(await t.ledger.advance(objectKey(ACCOUNT, 'transaction', 1), [2000, 55])).toBe(false);
    // The webhook of the next state comes first; re-reads of that state are no news.
    expect(await t.ledger.advance(objectKey(ACCOUNT, 'transaction', 1), [3000, 56])).toBe(true);
    t.set(1, 'transferred', 3000);
    const reads = t.reads.length;
    await eventually(async () => t.reads.length, (n) => n >= reads + 3);
    expect(t.published.filter((e) => e.origin === 'snapshot').map((e) => e.entity?.status)).toEqual(['approved']);
    await t.reconciler.close();
  });

  it('stops re-reading at a final state', async () => {
    const t = setup();
    t.set(1, 'pending', 1000);
    t.watch(1);
    await eventually(async () => t.reads.length, (n) => n >= 1);
    t.set(1, 'declined', 2000);
    await eventually(async () => t.published.some((e) => e.entity?.status === 'declined'), Boolean);
    const reads = t.reads.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(t.reads.length).toBe(reads);
    expect(t.reconciler.stats().owned).toBe(0);
    await t.reconciler.close();
  });

  it('publishes a re-read amount as the Decimal the decoder made, every digit kept, for the model to take as it is', async () => {
    const t = setup();
    const amount = Decimal.fromJsonNumber('12345678901234567.89');
    const fees = Decimal.fromJsonNumber('0.1000000000000000055511151231257827');
    t.set(1, 'pending', 1000);
    t.watch(1);
    t.state.set(1, { id: 1, status: 'approved', updated_at: new Date(2000).toISOString(), amount, fees, currency_id: 3 });
    const event = await eventually(async () => t.published.find((e) => e.entity?.status === 'approved'), Boolean);
    expect(event!.entity).toMatchObject({ amount, fees, currency_id: 3 });
    expect(String(event!.entity!.amount)).toBe('12345678901234567.89');
    const parsed = transactionModel.parse(event!.entity);
    expect([String(parsed.amount), String(parsed.fees)]).toEqual(['12345678901234567.89', '0.1000000000000000055511151231257827']);
    await t.reconciler.close();
  });

  it("moves on to another subscriber's key when the reading key is refused upstream", async () => {
    const t = setup({}, new Set(['sk_sandbox_revoked']));
    t.set(1, 'pending', 1000);
    t.watch(1, 'sk_sandbox_revoked');
    t.watch(1, 'sk_sandbox_valid');
    await eventually(async () => t.reads.length, (n) => n >= 2);
    expect(t.readers.slice(0, 2)).toEqual(['sk_sandbox_revoked', 'sk_sandbox_valid']);
    expect(t.reconciler.stats().errors).toBe(1);
    await t.reconciler.close();
  });
});
