/** The event log of one instance: the ledger's record and the fan-out together, or neither. */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { memoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { memoryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLog } from '../../../src/realtime/log.js';

const at = (iso: string) => ({ updated_at: iso });
const event = (id: number, updatedAt: string, objectId: number | null = 7): Omit<PaymentEvent, 'current'> => ({
  id, type: 'transaction.approved', object: 'transaction', objectId, accountId: 1, entity: at(updatedAt), createdAt: null,
});

function world() {
  const bus = memoryBus(createLogger('silent'));
  const seen: PaymentEvent[] = [];
  bus.subscribe(1, (e) => seen.push(e));
  return { bus, seen, log: ledgerLog(memoryLedger(), bus) };
}

describe('ledgerLog', () => {
  it('keeps an event once: a redelivery is a duplicate and reaches no subscriber', async () => {
    const { log, seen } = world();
    expect(await log.append(event(1, '2026-01-01T00:00:01Z'))).toBe('accepted');
    expect(await log.append(event(1, '2026-01-01T00:00:01Z'))).toBe('duplicate');
    expect(seen.map((e) => [e.id, e.current])).toEqual([[1, true]]);
  });

  it('delivers an event older than one already seen, marked not current', async () => {
    const { log, seen } = world();
    await log.append(event(2, '2026-01-01T00:00:05Z'));
    expect(await log.append(event(1, '2026-01-01T00:00:01Z'))).toBe('out_of_order');
    expect(seen.map((e) => [e.id, e.current])).toEqual([[2, true], [1, false]]);
    // An event of no object has no version to compare: always current.
    expect(await log.append(event(3, '2026-01-01T00:00:00Z', null))).toBe('accepted');
  });

  it('undoes the claim and the version when the fan-out fails, so the redelivery is taken whole', async () => {
    let failing = true;
    const seen: PaymentEvent[] = [];
    const log = ledgerLog(memoryLedger(), {
      publish: async (e) => {
        if (failing) throw new Error('bus down');
        seen.push(e);
      },
    });
    await expect(log.append(event(1, '2026-01-01T00:00:05Z'))).rejects.toThrow('bus down');
    failing = false;
    expect(await log.append(event(1, '2026-01-01T00:00:05Z'))).toBe('accepted');
    expect(seen.map((e) => [e.id, e.current])).toEqual([[1, true]]);
  });

  it('keeps a re-read snapshot only when strictly later than every version seen, and undoes it on a failed fan-out', async () => {
    const { log, seen } = world();
    await log.append(event(1, '2026-01-01T00:00:05Z'));
    const snapshot = { ...event(0, '2026-01-01T00:00:09Z'), current: true, origin: 'snapshot' as const };
    expect(await log.appendSnapshot(snapshot, Date.parse('2026-01-01T00:00:05Z'))).toBe(false);
    expect(await log.appendSnapshot(snapshot, Date.parse('2026-01-01T00:00:09Z'))).toBe(true);
    expect(await log.appendSnapshot(snapshot, Date.parse('2026-01-01T00:00:09Z'))).toBe(false);
    expect(seen.map((e) => e.origin ?? 'webhook')).toEqual(['webhook', 'snapshot']);
    expect(await log.appendSnapshot({ ...snapshot, objectId: null }, Date.parse('2026-01-01T00:01:00Z'))).toBe(false);

    let failing = true;
    const ledger = memoryLedger();
    const flaky = ledgerLog(ledger, { publish: async () => { if (failing) throw new Error('bus down'); } });
    await expect(flaky.appendSnapshot(snapshot, 1_000)).rejects.toThrow('bus down');
    failing = false;
    expect(await flaky.appendSnapshot(snapshot, 1_000)).toBe(true);
  });
});
