/**
 * The event side of `POST /webhooks/payments` (the HTTP side is
 * src/http/webhook-route.ts): verify the signature over the raw body, read
 * it with every amount exact (events.ts), take the event once (dedupe),
 * decide whether it is the object's newest state (ordering), answer, and
 * only then publish: the upstream waits on nothing but two store operations.
 */
import type { Logger } from '../logger.js';
import type { EventBus } from './bus.js';
import type { PaymentEvent } from './events.js';
import { objectKey, parseWebhookBody, toPaymentEvent, versionOf, webhookPayloadSchema } from './events.js';
import type { DeliveryLedger } from './ledger.js';
import { SIGNATURE_HEADER, verifySignature } from './signature.js';
import { MAX_NESTING, nestsWithin } from '../upstream/nesting.js';

export interface ReceiverDeps {
  secrets: readonly string[];
  ledger: DeliveryLedger;
  bus: EventBus;
  logger: Logger;
  toleranceSeconds?: number;
  now?: () => number;
  /**
   * Drops any cached copy of the event's object. Awaited before the webhook is
   * acknowledged, so once the upstream hears "received" no instance serves the
   * old copy; a failure answers 503 and the upstream redelivers.
   */
  evict?: (event: Pick<PaymentEvent, 'object' | 'objectId'>) => Promise<void>;
}

/** One delivery as it arrived: the raw bytes the signature covers. */
export interface Delivery {
  raw: Buffer;
  signatureHeader: string | undefined;
  remoteAddress: string | undefined;
}

/**
 * What became of a delivery, for metrics: `stale` is a signature too old (a
 * replay or a clock problem), `out_of_order` an older state than the one
 * already seen (published as an event, not a state change).
 */
export type IntakeResult = 'accepted' | 'out_of_order' | 'duplicate' | 'bad_signature' | 'stale' | 'invalid' | 'unavailable';

/** The answer for the upstream, and what to do once it is sent. */
export interface Intake {
  result: IntakeResult;
  status: number;
  body: Record<string, unknown>;
  afterReply?: () => void;
}

export { SIGNATURE_HEADER };

export function createWebhookIntake(deps: ReceiverDeps): (delivery: Delivery) => Promise<Intake> {
  const { secrets, ledger, bus, logger } = deps;
  if (secrets.length === 0) logger.warn('WEBHOOK_SECRETS is empty: every webhook will be refused');
  const reply = (result: IntakeResult, status: number, body: Record<string, unknown>, afterReply?: () => void): Intake => ({ result, status, body, ...(afterReply ? { afterReply } : {}) });

  return async function intake({ raw, signatureHeader, remoteAddress }: Delivery): Promise<Intake> {
    const check = verifySignature(signatureHeader, raw, {
      secrets,
      toleranceSeconds: deps.toleranceSeconds,
      nowSeconds: deps.now ? Math.floor(deps.now() / 1000) : undefined,
    });
    if (!check.ok) {
      // The reason only: never the header, the body or a secret.
      logger.warn({ reason: check.reason, remote: remoteAddress }, 'webhook refused: bad signature');
      return reply(check.reason === 'stale' ? 'stale' : 'bad_signature', check.reason === 'missing' || check.reason === 'malformed' ? 400 : 401, { error: 'invalid signature' });
    }

    let json: unknown;
    try {
      // Parsed only now, from the bytes the signature covered; amounts keep every digit (events.ts).
      json = parseWebhookBody(raw.toString('utf8'));
    } catch {
      logger.warn('webhook refused: body is not JSON');
      return reply('invalid', 400, { error: 'invalid JSON' });
    }
    // The schema takes the entity as a record without walking into it, so it is safe on any depth.
    const parsed = webhookPayloadSchema.safeParse(json);
    if (!parsed.success) {
      logger.warn({ issues: parsed.error.issues.map((i) => i.path.join('.')) }, 'webhook refused: not an event');
      return reply('invalid', 400, { error: 'not an event' });
    }
    const event = toPaymentEvent(parsed.data);
    // An event is an upstream item like those of the events API: nested deeper than the gateway
    // reads items, it would fail whatever serialises it (the Redis bus, a subscriber's answer).
    // Its object has changed all the same, so it is evicted first (a failed eviction asks for a retry).
    if (!nestsWithin(json, MAX_NESTING)) {
      try {
        await deps.evict?.(event);
      } catch (error) {
        logger.error({ err: error, eventId: event.id }, 'webhook not recorded: cache store failed');
        return reply('unavailable', 503, { error: 'try again later' });
      }
      logger.warn({ eventId: event.id, type: event.type }, 'webhook refused: nested too deep');
      return reply('invalid', 400, { error: 'not an event' });
    }

    let current: boolean;
    const key = event.objectId === null ? null : objectKey(event.accountId, event.object, event.objectId);
    const version = versionOf(event);
    try {
      // Every delivery evicts, duplicates and out-of-order ones too: it is idempotent and never wrong.
      await deps.evict?.(event);
      if (!(await ledger.claim(event.accountId, event.id))) {
        logger.debug({ eventId: event.id }, 'duplicate webhook delivery acknowledged');
        return reply('duplicate', 200, { received: true, duplicate: true });
      }
      current = key === null ? true : await ledger.advance(key, version);
    } catch (error) {
      // The store is unreachable: let the upstream retry later rather than lose the event.
      logger.error({ err: error, eventId: event.id }, 'webhook not recorded: delivery or cache store failed');
      return reply('unavailable', 503, { error: 'try again later' });
    }

    if (!current) logger.info({ eventId: event.id, type: event.type }, 'out-of-order webhook: published as an event, not as a state change');
    return reply(current ? 'accepted' : 'out_of_order', 200, { received: true, duplicate: false }, () => {
      setImmediate(() => {
        bus.publish({ ...event, current }).catch(async (error: unknown) => {
          logger.error({ err: error, eventId: event.id }, 'webhook event could not be published');
          // Nothing of it stays recorded: its redelivery is taken again, and as current if it was.
          // The version first, so a redelivery that passes the claim finds it undone.
          if (current && key !== null) await ledger.retreat(key, version).catch(() => undefined);
          await ledger.release(event.accountId, event.id).catch(() => undefined);
        });
      });
    });
  };
}
