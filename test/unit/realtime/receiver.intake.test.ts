/**
 * What the webhook intake makes of each delivery: the outcome the metrics
 * count, the answer the upstream reads, and the log line an operator reads
 * (never the header or a secret). The HTTP side is receiver.test.ts.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../../emulator/index.js';
import { memoryBus } from '../../../src/realtime/bus.js';
import type { PaymentEvent } from '../../../src/realtime/events.js';
import { memoryLedger, type DeliveryLedger } from '../../../src/realtime/ledger.js';
import { ledgerLog } from '../../../src/realtime/log.js';
import { createWebhookIntake, LIVE_WITHOUT_SECRETS } from '../../../src/realtime/receiver.js';
import { transactionEvent } from '../../realtime/support.js';

const SECRET = 'whsec_intake_table_0123456789abc';
const ACCOUNT = 44;
const NOW_MS = 1_750_000_000_000;
const NOW = NOW_MS / 1000;

function intakeWith(options: { ledger?: DeliveryLedger; evict?: () => Promise<void>; secrets?: string[]; live?: boolean; publishFails?: boolean; now?: () => number } = {}) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const bus = memoryBus(logger);
  const published: PaymentEvent[] = [];
  bus.subscribe(ACCOUNT, (e) => published.push(e));
  if (options.publishFails) bus.publish = () => Promise.reject(new Error('bus down'));
  const intake = createWebhookIntake({ secrets: options.secrets ?? [SECRET], log: ledgerLog(options.ledger ?? memoryLedger(), bus), logger, now: options.now ?? (() => NOW_MS), ...(options.live ? { live: true } : {}), ...(options.evict ? { evict: options.evict } : {}) });
  const deliver = async (body: string, header: string | undefined = signWebhookBody(SECRET, body, NOW)) => {
    const answer = await intake.receive({ raw: Buffer.from(body), signatureHeader: header, remoteAddress: '127.0.0.1' });
    return { result: answer.result, status: answer.status, body: answer.body };
  };
  const logged = (msg: string) => lines.filter((l) => l.msg === msg);
  return { intake, deliver, lines, logged, published };
}

const tx = (id: number, status: string, updatedAt: string) => transactionEvent({ accountId: ACCOUNT, transaction: { id, status, amount: 100, updated_at: updatedAt, customer_id: null } });
const accepted = { result: 'accepted', status: 200, body: { received: true, duplicate: false } };
const unavailable = { result: 'unavailable', status: 503, body: { error: 'try again later' } };

describe('webhook intake outcomes', () => {
  it('warns once at start when no secret is configured, and not otherwise', () => {
    expect(intakeWith({ secrets: [] }).logged('WEBHOOK_SECRETS is empty: every webhook will be refused')).toHaveLength(1);
    expect(intakeWith().lines).toEqual([]);
  });

  it('a live gateway with no secret says once, at error, that intake is off and what updates rely on', () => {
    const { lines } = intakeWith({ secrets: [], live: true });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: LIVE_WITHOUT_SECRETS });
    expect(LIVE_WITHOUT_SECRETS).toMatch(/webhook intake is OFF.*rely on reconciliation/);
    expect(intakeWith({ live: true }).lines).toEqual([]);
  });

  it('tells a stale signature from a bad one, by the clock it was given', async () => {
    const t = intakeWith();
    const body = tx(1, 'pending', '2024-05-01T10:00:00.000Z');
    expect(await t.deliver(body, signWebhookBody(SECRET, body, NOW - 301))).toEqual({ result: 'stale', status: 401, body: { error: 'invalid signature' } });
    expect(await t.deliver(body, signWebhookBody('whsec_other', body, NOW))).toEqual({ result: 'bad_signature', status: 401, body: { error: 'invalid signature' } });
    expect(await t.deliver(body, '')).toEqual({ result: 'bad_signature', status: 400, body: { error: 'invalid signature' } });
    expect(await t.deliver(body, 'garbage')).toEqual({ result: 'bad_signature', status: 400, body: { error: 'invalid signature' } });
    expect(t.logged('webhook refused: bad signature').map((l) => [l.reason, l.remote])).toEqual([
      ['stale', '127.0.0.1'],
      ['mismatch', '127.0.0.1'],
      ['missing', '127.0.0.1'],
      ['malformed', '127.0.0.1'],
    ]);
    expect(await t.deliver(body, signWebhookBody(SECRET, body, NOW - 300))).toEqual(accepted);
  });

  it('warns of refused signatures once per 10 s at most, by the clock it was given, with the count since the last line', async () => {
    let clock = NOW_MS;
    const t = intakeWith({ now: () => clock });
    const body = tx(9, 'pending', '2024-05-01T10:00:00.000Z');
    const warned = () => t.lines.filter((l) => l.level === 40).map((l) => [l.msg, l.reason, l.remote, l.refused]);
    const line = 'webhook refused: bad signature (one line per 10 s at most; refused: how many since the last line)';
    for (let i = 0; i < 3; i += 1) await t.deliver(body, 'garbage');
    expect(warned()).toEqual([[line, 'malformed', '127.0.0.1', 1]]);
    clock += 9_999;
    await t.deliver(body, signWebhookBody('whsec_other', body, Math.floor(clock / 1000)));
    // Refused before the body is read, by its header alone: counted the same.
    expect(t.intake.precheck(undefined, '10.0.0.9')).toEqual({ result: 'bad_signature', status: 400, body: { error: 'invalid signature' } });
    expect(t.intake.precheck(signWebhookBody(SECRET, body, Math.floor(clock / 1000)), '10.0.0.9')).toBeUndefined();
    expect(warned()).toHaveLength(1);
    clock = NOW_MS + 10_000;
    await t.deliver(body, signWebhookBody('whsec_other', body, Math.floor(clock / 1000)));
    expect(warned()).toEqual([
      [line, 'malformed', '127.0.0.1', 1],
      [line, 'mismatch', '127.0.0.1', 5],
    ]);
    // The next interval counts from that line's time.
    clock += 9_999;
    await t.deliver(body, 'garbage');
    expect(warned()).toHaveLength(2);
    clock += 1;
    await t.deliver(body, 'garbage');
    expect(warned().at(-1)).toEqual([line, 'malformed', '127.0.0.1', 2]);
  });

  it('refuses a signed body that is not JSON, or not an event, naming the fields that are wrong', async () => {
    const t = intakeWith();
    expect(await t.deliver('not json')).toEqual({ result: 'invalid', status: 400, body: { error: 'invalid JSON' } });
    expect(t.logged('webhook refused: body is not JSON')).toHaveLength(1);
    expect(await t.deliver(JSON.stringify({ id: 'x' }))).toEqual({ result: 'invalid', status: 400, body: { error: 'not an event' } });
    const [line] = t.logged('webhook refused: not an event');
    expect(line!.issues).toEqual(expect.arrayContaining(['id']));
  });

  it('refuses an event nested too deep after evicting its object, and asks for a retry when the eviction fails', async () => {
    const deep = tx(2, 'approved', '2024-05-01T10:00:00.000Z').replace('"customer_id":null', `"metadata":${'{"a":'.repeat(999)}1${'}'.repeat(999)}`);
    const t = intakeWith({ evict: async () => undefined });
    expect(await t.deliver(deep)).toEqual({ result: 'invalid', status: 400, body: { error: 'not an event' } });
    expect(t.logged('webhook refused: nested too deep')).toEqual([expect.objectContaining({ eventId: expect.any(Number), type: 'transaction.approved' })]);
    const failing = intakeWith({ evict: () => Promise.reject(new Error('cache down')) });
    expect(await failing.deliver(deep)).toEqual(unavailable);
    expect(failing.logged('webhook not recorded: cache store failed')).toEqual([expect.objectContaining({ eventId: expect.any(Number) })]);
  });

  it('accepts, acknowledges a duplicate, and marks an older state out of order, logging each', async () => {
    const t = intakeWith();
    const newer = tx(3, 'approved', '2024-05-01T10:00:05.000Z');
    expect(await t.deliver(newer)).toEqual(accepted);
    expect(t.logged('out-of-order webhook: published as an event, not as a state change')).toEqual([]);
    expect(await t.deliver(newer)).toEqual({ result: 'duplicate', status: 200, body: { received: true, duplicate: true } });
    expect(t.logged('duplicate webhook delivery acknowledged')).toEqual([expect.objectContaining({ eventId: expect.any(Number) })]);
    expect(await t.deliver(tx(3, 'pending', '2024-05-01T10:00:00.000Z'))).toEqual({ result: 'out_of_order', status: 200, body: { received: true, duplicate: false } });
    expect(t.logged('out-of-order webhook: published as an event, not as a state change')).toEqual([expect.objectContaining({ eventId: expect.any(Number), type: 'transaction.pending' })]);
    expect(t.published.map((e) => e.current)).toEqual([true, false]);
  });

  it('publishes an event about no object as current, with no ordering record', async () => {
    const calls: string[] = [];
    const inner = memoryLedger();
    const ledger: DeliveryLedger = {
      ...inner,
      advance: (...args) => (calls.push('advance'), inner.advance(...args)),
      retreat: (...args) => (calls.push('retreat'), inner.retreat(...args)),
    };
    const t = intakeWith({ ledger });
    const accountEvent = JSON.stringify({ id: 77, name: 'account.updated', type: 'account.updated', object: 'account', entity: null, object_id: null, account_id: ACCOUNT, created_at: '2024-05-01T10:00:00.000Z' });
    expect(await t.deliver(accountEvent)).toEqual(accepted);
    expect(t.published.map((e) => e.current)).toEqual([true]);
    // Nor anything to undo when its fan-out fails: only the claim is released, and the redelivery is taken.
    const failing = intakeWith({ ledger, publishFails: true });
    const next = accountEvent.replace('"id":77', '"id":78');
    expect(await failing.deliver(next)).toEqual(unavailable);
    expect(calls).toEqual([]);
    expect(await t.deliver(next)).toEqual(accepted);
    expect(t.published.map((e) => e.id)).toEqual([77, 78]);
  });

  it('answers 503 when the delivery store fails, and logs which event', async () => {
    const broken: DeliveryLedger = { ...memoryLedger(), claim: () => Promise.reject(new Error('store down')) };
    const t = intakeWith({ ledger: broken });
    expect(await t.deliver(tx(4, 'approved', '2024-05-01T10:00:00.000Z'))).toEqual(unavailable);
    expect(t.logged('webhook not recorded: delivery or cache store failed')).toEqual([expect.objectContaining({ eventId: expect.any(Number) })]);
  });

  it('undoes only what it recorded when a fan-out fails: an out-of-order event advanced nothing', async () => {
    const calls: string[] = [];
    const inner = memoryLedger();
    const ledger: DeliveryLedger = { ...inner, retreat: (...args) => (calls.push(`retreat ${String(args[1])}`), inner.retreat(...args)) };
    const t = intakeWith({ ledger });
    await t.deliver(tx(5, 'approved', '2024-05-01T10:00:05.000Z'));
    const failing = intakeWith({ ledger, publishFails: true });
    expect(await failing.deliver(tx(5, 'pending', '2024-05-01T10:00:00.000Z'))).toEqual(unavailable);
    expect(calls).toEqual([]);
    expect(failing.logged('webhook not recorded: delivery or cache store failed')).toEqual([expect.objectContaining({ eventId: expect.any(Number) })]);
    await failing.deliver(tx(5, 'refunded', '2024-05-01T10:00:09.000Z'));
    expect(calls).toEqual([`retreat ${Date.parse('2024-05-01T10:00:09.000Z')},${calls[0]?.split(',')[1]}`]);
  });

  it('logs one error line for a store outage, without a stack, and the count of refused deliveries when one is kept again', async () => {
    let down = true;
    const inner = memoryLedger();
    const ledger: DeliveryLedger = { ...inner, claim: (...args) => (down ? Promise.reject(new Error('store down')) : inner.claim(...args)) };
    const t = intakeWith({ ledger });
    for (let id = 20; id < 27; id += 1) expect(await t.deliver(tx(id, 'approved', '2024-05-01T10:00:00.000Z'))).toEqual(unavailable);
    const errors = t.lines.filter((l) => l.level === 50);
    expect(errors).toEqual([expect.objectContaining({ msg: 'webhook not recorded: delivery or cache store failed', err: expect.objectContaining({ message: 'store down' }) })]);
    expect((errors[0]!.err as { stack?: string }).stack).toBeFalsy();
    down = false;
    expect(await t.deliver(tx(20, 'approved', '2024-05-01T10:00:00.000Z'))).toEqual(accepted);
    expect(await t.deliver(tx(21, 'approved', '2024-05-01T10:00:00.000Z'))).toEqual(accepted);
    const recovered = t.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('webhook intake recovered'));
    expect(recovered).toEqual([expect.objectContaining({ level: 40, refused: 7 })]);
    // A second outage is a second line.
    down = true;
    expect(await t.deliver(tx(30, 'approved', '2024-05-01T10:00:00.000Z'))).toEqual(unavailable);
    expect(t.lines.filter((l) => l.level === 50)).toHaveLength(2);
  });
});
