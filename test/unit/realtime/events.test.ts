/** One webhook event, as it travels on the bus: parsed exactly, named, and ordered by its version. */
import { describe, expect, it } from 'vitest';
import { isNewer, objectKey, parseWebhookBody, toPaymentEvent, versionOf, webhookPayloadSchema } from '../../../src/realtime/events.js';
import { Decimal } from '../../../src/upstream/decimal.js';

const payload = (fields: Record<string, unknown>) => webhookPayloadSchema.parse({ id: 9, account_id: 4, ...fields });

describe('webhook events', () => {
  it('wants an id, an account and a type or a name', () => {
    expect(webhookPayloadSchema.safeParse({ id: 1, account_id: 2, type: 'transaction.created' }).success).toBe(true);
    expect(webhookPayloadSchema.safeParse({ id: 1, account_id: 2, name: 'transaction.created' }).success).toBe(true);
    expect(webhookPayloadSchema.safeParse({ id: 1, account_id: 2 }).success).toBe(false);
    expect(webhookPayloadSchema.safeParse({ id: 1.5, account_id: 2, type: 'x' }).success).toBe(false);
    expect(webhookPayloadSchema.safeParse({ id: 1, type: 'x' }).success).toBe(false);
  });

  it('reads the object kind and id from the type and entity when the payload leaves them out', () => {
    expect(toPaymentEvent(payload({ name: 'payout.sent', entity: { id: 33 } }))).toEqual({
      id: 9, type: 'payout.sent', object: 'payout', objectId: 33, accountId: 4, entity: { id: 33 }, createdAt: null,
    });
    const explicit = toPaymentEvent(payload({ type: 'transaction.approved', object: 'transaction', object_id: 5, entity: { id: 6 }, created_at: '2026-01-01T00:00:00Z' }));
    expect([explicit.object, explicit.objectId, explicit.createdAt]).toEqual(['transaction', 5, '2026-01-01T00:00:00Z']);
    expect(toPaymentEvent(payload({ type: 'x.y', entity: { id: 'seven' } })).objectId).toBeNull();
  });

  it('parses amounts exactly, and falls back to plain JSON only for a body refused for its depth', () => {
    const body = parseWebhookBody('{"id":1,"account_id":2,"type":"transaction.approved","entity":{"id":3,"amount":12345678901234567890.5}}') as { entity: { amount: unknown } };
    expect(body.entity.amount).toBeInstanceOf(Decimal);
    expect(String(body.entity.amount)).toBe('12345678901234567890.5');
    // Deeper than MAX_NESTING, whether or not lossless-json can read it: plain JSON, amounts included.
    for (const levels of [1_100, 5_000]) {
      const deep = `{"id":1,"entity":{"amount":12.5,"deep":${'['.repeat(levels)}${']'.repeat(levels)}}}`;
      expect(parseWebhookBody(deep)).toEqual(JSON.parse(deep));
    }
    expect(() => parseWebhookBody('{not json')).toThrow();
  });

  it('orders versions by the entity\'s update time, then the event id, and names one ledger key per object', () => {
    const at = (updatedAt: string | undefined, id: number, createdAt: string | null = null) =>
      versionOf({ ...toPaymentEvent(payload({ type: 't.x', entity: updatedAt ? { updated_at: updatedAt } : {} })), id, createdAt });
    expect(at('2026-01-01T00:00:01Z', 1)).toEqual([Date.parse('2026-01-01T00:00:01Z'), 1]);
    expect(at(undefined, 2, '2026-01-01T00:00:00Z')).toEqual([Date.parse('2026-01-01T00:00:00Z'), 2]);
    expect(at('not a date', 3)).toEqual([0, 3]);
    expect(isNewer([2, 1], [1, 9])).toBe(true);
    expect(isNewer([1, 2], [1, 1])).toBe(true);
    expect(isNewer([1, 1], [1, 1])).toBe(false);
    expect(isNewer([1, 9], [2, 1])).toBe(false);
    expect(objectKey(4, 'payout', 7)).toBe('4:payout:7');
  });
});
