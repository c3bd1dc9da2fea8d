/**
 * The single instance's event log (src/realtime/log.ts, `ledgerLog`): the ledger's record and the local
 * fan-out are kept together or not at all. A failed fan-out undoes the version and the claim, so the
 * redelivery is taken whole; a failed undo never hides the fan-out's error.
 */
import { describe, expect, it } from 'vitest';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { memoryLedger, SNAPSHOT_EVENT_ID, type DeliveryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLog } from '../../../src/realtime/log.js';

const webhook = (id: number, at: string, objectId: number | null = 9): Omit<PaymentEvent, 'current'> => ({
  id,
  type: 'transaction.approved',
  object: objectId === null ? null : 'transaction',
  objectId,
  accountId: 7,
  entity: objectId === null ? null : { id: objectId, status: 'approved', updated_at: at },
  createdAt: at,
});
const snapshot = (at: string): PaymentEvent => ({ ...webhook(0, at), current: true, origin: 'snapshot' });

/** A memory ledger whose calls are written down, each of them failing on demand. */
function recordedLedger(failing: Partial<Record<keyof DeliveryLedger, boolean>> = {}) {
  const ledger = memoryLedger();
  const calls: string[] = [];
  const wrap = <K extends keyof DeliveryLedger>(name: K) =>
    (async (...args: unknown[]) => {
      calls.push(`${name} ${JSON.stringify(args)}`);
      if (failing[name]) throw new Error(`${name} failed`);
      return (ledger[name] as (...a: unknown[]) => Promise<unknown>)(...args);
    }) as DeliveryLedger[K];
  const recorded: DeliveryLedger = { claim: wrap('claim'), release: wrap('release'), advance: wrap('advance'), retreat: wrap('retreat'), advanceTo: wrap('advanceTo') };
  return { ledger: recorded, calls };
}

function bus(fail = () => false) {
  const published: PaymentEvent[] = [];
  return {
    published,
    publish: async (event: PaymentEvent) => {
      if (fail()) throw new Error('fan-out failed');
      published.push(event);
    },
  };
}

const T0 = '2026-01-01T10:00:00.000Z';
const T1 = '2026-01-01T10:00:05.000Z';

describe('the single instance event log', () => {
  it('keeps each event once, current unless a later version of its object came first', async () => {
    const out = bus();
    const log = ledgerLog(memoryLedger(), out);
    expect(await log.append(webhook(2, T1))).toBe('accepted');
    expect(await log.append(webhook(2, T1))).toBe('duplicate');
    expect(await log.append(webhook(1, T0))).toBe('out_of_order');
    expect(out.published.map((e) => [e.id, e.current])).toEqual([
      [2, true],
      [1, false],
    ]);
  });

  it('takes an event about no object as current, and records no version for it', async () => {
    const { ledger, calls } = recordedLedger();
    const out = bus();
    expect(await ledgerLog(ledger, out).append(webhook(3, T0, null))).toBe('accepted');
    expect(out.published.map((e) => [e.id, e.current])).toEqual([[3, true]]);
    expect(calls).toEqual(['claim [7,3]']);
  });

  it('undoes the version, then the claim, when the fan-out fails, so the redelivery is taken as current', async () => {
    let failing = true;
    const { ledger, calls } = recordedLedger();
    const out = bus(() => failing);
    const log = ledgerLog(ledger, out);
    await expect(log.append(webhook(5, T1))).rejects.toThrow('fan-out failed');
    const ms = Date.parse(T1);
    expect(calls).toEqual(['claim [7,5]', `advance ["7:transaction:9",[${ms},5]]`, `retreat ["7:transaction:9",[${ms},5]]`, 'release [7,5]']);
    failing = false;
    expect(await log.append(webhook(5, T1))).toBe('accepted');
    expect(out.published.map((e) => [e.id, e.current])).toEqual([[5, true]]);
  });

  it('undoes no version it did not advance: an out-of-order event whose fan-out fails releases its claim only', async () => {
    let failing = false;
    const { ledger, calls } = recordedLedger();
    const log = ledgerLog(ledger, bus(() => failing));
    await log.append(webhook(6, T1));
    failing = true;
    calls.length = 0;
    await expect(log.append(webhook(4, T0))).rejects.toThrow('fan-out failed');
    expect(calls.filter((c) => !c.startsWith('claim') && !c.startsWith('advance'))).toEqual(['release [7,4]']);
    // An event about no object has no version to undo either.
    calls.length = 0;
    await expect(log.append(webhook(8, T0, null))).rejects.toThrow('fan-out failed');
    expect(calls).toEqual(['claim [7,8]', 'release [7,8]']);
  });

  it('throws the fan-out\'s error when the undo fails too, and still releases the claim', async () => {
    const { ledger, calls } = recordedLedger({ retreat: true, release: true });
    const log = ledgerLog(ledger, bus(() => true));
    await expect(log.append(webhook(5, T1))).rejects.toThrow('fan-out failed');
    expect(calls.map((c) => c.split(' ')[0])).toEqual(['claim', 'advance', 'retreat', 'release']);
    await expect(log.appendSnapshot(snapshot(T1), Date.parse(T1) + 1)).rejects.toThrow('fan-out failed');
  });

  it('keeps a re-read snapshot only when it is news, and undoes it when its fan-out fails', async () => {
    let failing = false;
    const { ledger, calls } = recordedLedger();
    const out = bus(() => failing);
    const log = ledgerLog(ledger, out);
    const ms = Date.parse(T1);
    expect(await log.appendSnapshot(snapshot(T1), ms)).toBe(true);
    expect(out.published).toEqual([snapshot(T1)]);
    expect(await log.appendSnapshot(snapshot(T1), ms)).toBe(false);
    expect(await log.appendSnapshot({ ...snapshot(T1), objectId: null }, ms + 5)).toBe(false);
    expect(out.published).toHaveLength(1);
    failing = true;
    calls.length = 0;
    await expect(log.appendSnapshot(snapshot(T1), ms + 10)).rejects.toThrow('fan-out failed');
    expect(calls).toEqual([`advanceTo ["7:transaction:9",${ms + 10}]`, `retreat ["7:transaction:9",[${ms + 10},${SNAPSHOT_EVENT_ID}]]`]);
    // Undone: the same snapshot is news again.
    failing = false;
    expect(await log.appendSnapshot(snapshot(T1), ms + 10)).toBe(true);
  });

  it('undoes no version when recording it failed: the claim alone is released', async () => {
    const { ledger, calls } = recordedLedger({ advance: true });
    await expect(ledgerLog(ledger, bus()).append(webhook(5, T1))).rejects.toThrow('advance failed');
    expect(calls.map((c) => c.split(' ')[0])).toEqual(['claim', 'advance', 'release']);
  });
});
