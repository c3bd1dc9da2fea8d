/**
 * What travels on the event bus: one upstream webhook event, validated once at
 * the receiver. The payload shape is the upstream's (emulator/engine.ts,
 * `deliver`): `{id, name|type, object, entity, object_id, account_id, created_at}`.
 *
 * Amounts are exact as on the HTTP path (src/upstream/decode.ts): a body whose
 * every number reads back as itself from a JS number is `JSON.parse`d, and an
 * entity's amounts are those numbers; any other body is read with lossless-json,
 * and the amounts of a transaction's or payout's entity become `Decimal`s from
 * their digits. Either way the models make the same `Decimal` of them.
 */
import { z } from 'zod';
import { parsedLosslessly, parseExactJson, withAmounts } from '../upstream/index.js';
import { entityMoneyKeys } from '../upstream/index.js';
import { MAX_NESTING, nestsWithin } from '../upstream/index.js';

export const webhookPayloadSchema = z
  .looseObject({
    id: z.number().int(),
    type: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    object: z.string().nullish(),
    entity: z.record(z.string(), z.unknown()).nullish(),
    object_id: z.number().int().nullish(),
    account_id: z.number().int(),
    created_at: z.string().nullish(),
  })
  .refine((p) => p.type ?? p.name, { message: 'type or name is required' });

export interface PaymentEvent {
  id: number;
  type: string;
  /** `transaction`, `payout`, `customer`...: the kind of `entity`. */
  object: string | null;
  objectId: number | null;
  accountId: number;
  entity: Record<string, unknown> | null;
  createdAt: string | null;
  /**
   * False when an event about the same object with a later version was seen
   * first (delivery is unordered): the event still happened, but its snapshot
   * is not the object's current state and must not be published as such.
   */
  current: boolean;
  /**
   * `snapshot`: not an upstream event but the object as the gateway re-read
   * it (src/realtime/reconciler.ts), published so every subscriber of the
   * object sees the change; `id` is then 0 and it is no event to report.
   * Absent: a webhook event.
   */
  origin?: 'snapshot';
}

/**
 * A webhook body as JSON (throws when it is not), no amount rounded: see the
 * top of this file. A body lossless-json cannot read for its depth, or that
 * nests deeper than MAX_NESTING, is `JSON.parse`d as before: the receiver
 * refuses it for its depth (after evicting its object), so its digits never
 * reach a subscriber, and no walk here recurses that deep.
 */
export function parseWebhookBody(text: string): unknown {
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    // Too deep for lossless-json, which recurses (a RangeError): read whole, refused for its depth.
    if (!(error instanceof RangeError)) throw error;
    // eslint-disable-next-line no-restricted-properties -- no digit of a body refused for its depth reaches a subscriber
    return JSON.parse(text);
  }
  if (!parsedLosslessly(body) || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  // eslint-disable-next-line no-restricted-properties -- as above: refused for its depth
  if (!nestsWithin(body, MAX_NESTING)) return JSON.parse(text);
  // The entity's kind as toPaymentEvent names it: `object`, else the type's prefix.
  return withAmounts(body, undefined, { entity: entityMoneyKeys(body as Record<string, unknown>) });
}

export function toPaymentEvent(payload: z.infer<typeof webhookPayloadSchema>): Omit<PaymentEvent, 'current'> {
  const type = payload.type ?? payload.name ?? '';
  return {
    id: payload.id,
    type,
    object: payload.object ?? type.split('.')[0] ?? null,
    objectId: payload.object_id ?? (typeof payload.entity?.id === 'number' ? payload.entity.id : null),
    accountId: payload.account_id,
    entity: payload.entity ?? null,
    createdAt: payload.created_at ?? null,
  };
}

/**
 * Order of snapshots of one object: the entity's `updated_at`, then the event
 * id (ids only grow upstream), so two events in the same millisecond still order.
 */
/** The ledger's key of one object: webhooks and re-reads of it must advance the same one. */
export const objectKey = (accountId: number, kind: string | null, id: number) => `${accountId}:${kind}:${id}`;

export type Version = readonly [updatedAtMs: number, eventId: number];

export function versionOf(event: Omit<PaymentEvent, 'current'>): Version {
  const stamp = event.entity?.updated_at ?? event.createdAt;
  const ms = typeof stamp === 'string' ? Date.parse(stamp) : NaN;
  return [Number.isFinite(ms) ? ms : 0, event.id];
}

export function isNewer(a: Version, b: Version): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}
