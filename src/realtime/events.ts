/**
 * What travels on the bus: one webhook event, validated once at the receiver. Amounts are read exactly, as on the
 * HTTP path (upstream/decode.ts).
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
  object: string | null;
  objectId: number | null;
  accountId: number;
  entity: Record<string, unknown> | null;
  createdAt: string | null;
  /** False when a later version of the object was seen first: the event happened, but its snapshot is not current. */
  current: boolean;
  /** `snapshot`: the object as the reconciler re-read it (`id` 0, no event to report); absent: a webhook event. */
  origin?: 'snapshot';
}

/** A body too deep for lossless-json or MAX_NESTING is `JSON.parse`d: the receiver refuses it for its depth anyway. */
export function parseWebhookBody(text: string): unknown {
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    // eslint-disable-next-line no-restricted-properties -- no digit of a body refused for its depth reaches a subscriber
    return JSON.parse(text);
  }
  if (!parsedLosslessly(body) || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  // eslint-disable-next-line no-restricted-properties -- as above: refused for its depth
  if (!nestsWithin(body, MAX_NESTING)) return JSON.parse(text);
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

/** Webhooks and re-reads of one object must advance the same ledger key. */
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
