/**
 * The chaos suite, short (test/chaos/scenario.ts; the long one is `npm run bench -- chaos`): every fault under one
 * load of signed webhooks, subscribers with and without an id on every gateway and keyed payments through a
 * payments API that ignores `Idempotency-Key`. In each: no event lost, none seen twice, no payment doubled, what
 * was refused meanwhile counted and inside the fault's window (docs/resilience.md, The chaos suite), and every
 * gateway taking keyed payments again after it; a Redis back empty quarantines, found within seconds.
 */
import { expect, it } from 'vitest';
import { describeWith } from '../support/tools.js';
import { FAULTS, runChaos, type FaultName, type FaultReport } from './scenario.js';

const EVENTS = 12;

/** What the sender was refused while each fault lasted: some, or the fault fell outside the load. */
const WEBHOOK_REFUSAL: Record<FaultName, string> = {
  'redis-killed': 'webhook 503',
  'redis-cut-off': 'webhook 503',
  'redis-empty': 'webhook 503',
  'gateway-killed': 'webhook unanswered',
  'single-gateway-killed': 'webhook unanswered',
};

describeWith('redis-server', 'the chaos suite', () => {
  it('loses nothing, doubles nothing, and counts what it refused, whatever fails', async () => {
    const reports = await runChaos({
      faults: FAULTS,
      events: EVENTS,
      paceMs: 40,
      clients: 3,
      quarantineMs: 5_000,
      retryWindowMs: 4_000,
      cutOffMs: 3_000,
      progress: (line) => console.log(line),
    });
    for (const report of reports) {
      const { fault } = report;
      const everyone = Object.fromEntries(Object.keys(report.subscribers).map((who) => [who, { approved: EVENTS, seen: EVENTS, lost: 0, twice: 0 }]));
      // Redis back empty too: what the other gateway had not read when it died is appended again (docs/realtime.md).
      expect({ fault, subscribers: report.subscribers }).toEqual({ fault, subscribers: everyone });
      expect({ fault, doubled: report.payments.doubled, outsideWindow: report.outsideWindow, recovered: report.recovered }).toEqual({ fault, doubled: 0, outsideWindow: 0, recovered: true });
      expect(report.refused[WEBHOOK_REFUSAL[fault]] ?? 0, fault).toBeGreaterThan(0);
      expect(report.payments.answered, fault).toBeGreaterThan(0);
      // Every answered payment sent again once the fault was over replays its transaction (its record outlived the
      // fault) or is refused (a record left running by a failed write), never acts again (doubled, above); not after
      // Redis came back empty, whose records are gone.
      if (fault !== 'redis-empty') expect(report.payments.replayedAfter, fault).toBeGreaterThan(0);
    }
    expect(reports.map((r) => r.fault)).toEqual(FAULTS);
    const byFault = new Map<FaultName, FaultReport>(reports.map((r) => [r.fault, r]));
    // Both gateways quarantine within seconds, each says so once, and keyed payments were refused meanwhile.
    const empty = byFault.get('redis-empty')!;
    expect(empty.quarantine!.lossLines).toEqual([1, 1]);
    for (const ms of empty.quarantine!.foundMs) expect(ms).toBeLessThan(5_000);
    expect(empty.refused.IDEMPOTENCY_UNAVAILABLE).toBeGreaterThan(0);
    // Each kill fell while a payment sent to that gateway was being created upstream.
    expect(byFault.get('gateway-killed')!.killedMidPayment).toBe(true);
    expect(byFault.get('single-gateway-killed')!.killedMidPayment).toBe(true);
  }, 300_000);
});
