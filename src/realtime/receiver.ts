/**
 * The event side of `POST /webhooks/payments`: signature, exact read, eviction, then the event log's append
 * (dedupe, ordering, kept, delivered here), and only then the answer: a 2xx means the event is kept.
 */
import type { Logger } from '../logger.js';
import type { PaymentEvent } from './events.js';
import { parseWebhookBody, toPaymentEvent, webhookPayloadSchema } from './events.js';
import type { EventLog } from './log.js';
import { readSignatureHeader, SIGNATURE_HEADER, verifySignature, type SignatureCheck } from './signature.js';
import { MAX_NESTING, nestsWithin } from '../upstream/index.js';

export interface ReceiverDeps {
  secrets: readonly string[];
  /** Live with no secret means real payments go unseen until reconciliation reads them. */
  live?: boolean;
  log: EventLog;
  logger: Logger;
  toleranceSeconds?: number;
  now?: () => number;
  /** Awaited before the acknowledgement, so once the upstream hears "received" no instance serves the old copy. */
  evict?: (event: Pick<PaymentEvent, 'object' | 'objectId'>) => Promise<void>;
}

export interface Delivery {
  raw: Buffer;
  signatureHeader: string | undefined;
  remoteAddress: string | undefined;
}

export type IntakeResult = 'accepted' | 'out_of_order' | 'duplicate' | 'bad_signature' | 'stale' | 'invalid' | 'unavailable' | 'too_large';

export const REFUSAL_LOG_INTERVAL_MS = 10_000;

export interface Intake {
  result: IntakeResult;
  status: number;
  body: Record<string, unknown>;
}

export { SIGNATURE_HEADER };

export interface WebhookIntake {
  precheck(signatureHeader: string | undefined, remoteAddress: string | undefined): Intake | undefined;
  receive(delivery: Delivery): Promise<Intake>;
}

export const LIVE_WITHOUT_SECRETS =
  'PAYMENTS_ENV=live with WEBHOOK_SECRETS empty: webhook intake is OFF (every delivery refused with 401); live updates rely on reconciliation polling alone. Register https://<host>/webhooks/payments with the provider and set its secret in WEBHOOK_SECRETS';

export function createWebhookIntake(deps: ReceiverDeps): WebhookIntake {
  const { secrets, log, logger } = deps;
  if (secrets.length === 0 && deps.live) logger.error(LIVE_WITHOUT_SECRETS);
  else if (secrets.length === 0) logger.warn('WEBHOOK_SECRETS is empty: every webhook will be refused');
  const reply = (result: IntakeResult, status: number, body: Record<string, unknown>): Intake => ({ result, status, body });
  const now = deps.now ?? Date.now;

  // A store outage refuses every delivery meanwhile: one error line when it starts, the count when one is kept again.
  let refusedInOutage = 0;
  const unavailable = (error: unknown, eventId: number, msg: string): Intake => {
    if (refusedInOutage === 0) logger.error({ err: { message: error instanceof Error ? error.message : String(error) }, eventId }, msg);
    refusedInOutage += 1;
    return reply('unavailable', 503, { error: 'try again later' });
  };
  const kept = () => {
    if (refusedInOutage === 0) return;
    logger.warn({ refused: refusedInOutage }, 'webhook intake recovered: refused: deliveries answered 503 while the store failed (the sender redelivers them)');
    refusedInOutage = 0;
  };

  // Forged deliveries must not become a flood of log lines: one warning per interval with the count.
  let refusedSinceLine = 0;
  let lastLineAt = Number.NEGATIVE_INFINITY;
  const refuse = (check: Extract<SignatureCheck, { ok: false }>, remote: string | undefined): Intake => {
    // The reason only: never the header, the body or a secret.
    logger.debug({ reason: check.reason, remote }, 'webhook refused: bad signature');
    refusedSinceLine += 1;
    if (now() - lastLineAt >= REFUSAL_LOG_INTERVAL_MS) {
      logger.warn({ reason: check.reason, remote, refused: refusedSinceLine }, 'webhook refused: bad signature (one line per 10 s at most; refused: how many since the last line)');
      lastLineAt = now();
      refusedSinceLine = 0;
    }
    return reply(check.reason === 'stale' ? 'stale' : 'bad_signature', check.reason === 'missing' || check.reason === 'malformed' ? 400 : 401, { error: 'invalid signature' });
  };

  const precheck: WebhookIntake['precheck'] = (signatureHeader, remoteAddress) => {
    const read = readSignatureHeader(signatureHeader, secrets);
    return read.ok ? undefined : refuse(read, remoteAddress);
  };

  const receive = async function intake({ raw, signatureHeader, remoteAddress }: Delivery): Promise<Intake> {
    const check = verifySignature(signatureHeader, raw, {
      secrets,
      toleranceSeconds: deps.toleranceSeconds,
      nowSeconds: deps.now ? Math.floor(deps.now() / 1000) : undefined,
    });
    if (!check.ok) return refuse(check, remoteAddress);

    let json: unknown;
    try {
      // Parsed only now, from the bytes the signature covered.
      json = parseWebhookBody(raw.toString('utf8'));
    } catch {
      logger.warn('webhook refused: body is not JSON');
      return reply('invalid', 400, { error: 'invalid JSON' });
    }
    // The schema does not walk into the entity: safe on any depth.
    const parsed = webhookPayloadSchema.safeParse(json);
    if (!parsed.success) {
      logger.warn({ issues: parsed.error.issues.map((i) => i.path.join('.')) }, 'webhook refused: not an event');
      return reply('invalid', 400, { error: 'not an event' });
    }
    const event = toPaymentEvent(parsed.data);
    // Too deep for anything to serialise it; its object changed all the same, so it is evicted first.
    if (!nestsWithin(json, MAX_NESTING)) {
      try {
        await deps.evict?.(event);
      } catch (error) {
        return unavailable(error, event.id, 'webhook not recorded: cache store failed');
      }
      logger.warn({ eventId: event.id, type: event.type }, 'webhook refused: nested too deep');
      return reply('invalid', 400, { error: 'not an event' });
    }

    let result: Awaited<ReturnType<EventLog['append']>>;
    try {
      // Duplicates evict too: eviction is idempotent and never wrong.
      await deps.evict?.(event);
      result = await log.append(event);
    } catch (error) {
      // Nothing kept: the upstream retries later, and the retry is taken whole.
      return unavailable(error, event.id, 'webhook not recorded: delivery or cache store failed');
    }
    kept();
    if (result === 'duplicate') {
      logger.debug({ eventId: event.id }, 'duplicate webhook delivery acknowledged');
      return reply('duplicate', 200, { received: true, duplicate: true });
    }
    if (result === 'out_of_order') logger.info({ eventId: event.id, type: event.type }, 'out-of-order webhook: published as an event, not as a state change');
    return reply(result, 200, { received: true, duplicate: false });
  };

  return { precheck, receive };
}
