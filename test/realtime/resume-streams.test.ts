/**
 * paymentEvent(after:): a subscriber that was away gets the events it
 * missed, read from the upstream's event list, then live ones, none twice.
 * The emulator's webhooks reach no gateway here (a restart's worth of lost
 * deliveries); some are then posted by hand, as late redeliveries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { postWebhook, sleep, startRealtimeStack, subscribe, subscribeLive, wsClient, type RealtimeStack } from './support.js';

interface PaymentEventData {
  paymentEvent: { id: string; type: string; objectId: string };
}
const PAYMENT_EVENT = `subscription ($types: [String!], $after: ID) { paymentEvent(types: $types, after: $after) { id type objectId } }`;

interface UpstreamEvent {
  id: number;
  type: string;
  object_id: number;
  account_id: number;
  entity: Record<string, unknown>;
  created_at: string;
}

describe('paymentEvent resuming after the last event received', () => {
  let stack: RealtimeStack;
  beforeAll(async () => {
    stack = await startRealtimeStack({ forward: false });
  });
  afterAll(() => stack.stop());

  async function accountWithGap() {
    const key = newKey('resume');
    const f = factories(stack.emulator, key);
    const list = async () => {
      const body = (await f.rest('GET', '/v1/events?per_page=100')) as Record<string, unknown>;
      return ((body['v1/events'] ?? body) as UpstreamEvent[]).sort((a, b) => a.id - b.id);
    };
    await f.customer();
    const seen = (await list()).at(-1)!;
    // What happens while the subscriber is away.
    const customer = await f.customer();
    await f.transaction({ customer: { id: customer.id } });
    await f.transaction({ customer: { id: customer.id } });
    const missed = (await list()).filter((e) => e.id > seen.id);
    return { key, seen, missed };
  }

  it('emits the missed events oldest first, then live ones, and a missed event redelivered live only once', async () => {
    const { key, seen, missed } = await accountWithGap();
    expect(missed.length).toBeGreaterThanOrEqual(3);
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<PaymentEventData>(stack.wsUrl, client, PAYMENT_EVENT, { after: String(seen.id) });
    await sub.nth(missed.length);
    expect(sub.values.map((v) => Number(v.paymentEvent.id))).toEqual(missed.map((e) => e.id));

    // A late redelivery of a missed event, then a new event.
    const body = (e: UpstreamEvent) => JSON.stringify({ ...e, name: e.type, object: e.type.split('.')[0] });
    await postWebhook(stack.gateway.port, body(missed[1]!), { secret: stack.secret });
    const fresh = { ...missed.at(-1)!, id: missed.at(-1)!.id + 1000, type: 'transaction.updated' };
    await postWebhook(stack.gateway.port, body(fresh), { secret: stack.secret });
    await sub.nth(missed.length + 1);
    await sleep(50);
    expect(sub.values.map((v) => Number(v.paymentEvent.id))).toEqual([...missed.map((e) => e.id), fresh.id]);
    await client.dispose();
  });

  it('applies the type filter to the missed events too', async () => {
    const { key, seen, missed } = await accountWithGap();
    const { client, connected } = wsClient(stack.wsUrl, key);
    await connected;
    const sub = await subscribeLive<PaymentEventData>(stack.wsUrl, client, PAYMENT_EVENT, { after: String(seen.id), types: ['transaction.created'] });
    const created = missed.filter((e) => e.type === 'transaction.created');
    expect(created).toHaveLength(2);
    await sub.nth(2);
    expect(sub.values.map((v) => [Number(v.paymentEvent.id), v.paymentEvent.type])).toEqual(created.map((e) => [e.id, e.type]));
    await client.dispose();
  });

  it('refuses a malformed after with BAD_USER_INPUT', async () => {
    const { client, connected } = wsClient(stack.wsUrl, newKey('resume_bad'));
    await connected;
    const sub = subscribe<PaymentEventData>(client, PAYMENT_EVENT, { after: 'not-an-id' });
    const errors = (await sub.error) as { extensions?: { code?: string } }[];
    expect(errors[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await client.dispose();
  });
});
