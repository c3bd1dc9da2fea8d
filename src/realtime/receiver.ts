/**
 * `POST /webhooks/payments`: verify the signature over the raw body, take the
 * event once (dedupe), decide whether it is the object's newest state
 * (ordering), answer, and only then publish: the upstream waits on nothing
 * but two store operations.
 */
import type http from 'node:http';
import type { Logger } from '../logger.js';
import type { EventBus } from './bus.js';
import { toPaymentEvent, versionOf, webhookPayloadSchema } from './events.js';
import type { DeliveryLedger } from './ledger.js';
import { SIGNATURE_HEADER, verifySignature } from './signature.js';

/** Events are small; the upstream's largest snapshot is a few kilobytes. */
const MAX_WEBHOOK_BYTES = 256 * 1024;

export interface ReceiverDeps {
  secrets: readonly string[];
  ledger: DeliveryLedger;
  bus: EventBus;
  logger: Logger;
  toleranceSeconds?: number;
  now?: () => number;
}

export function createWebhookReceiver(deps: ReceiverDeps) {
  const { secrets, ledger, bus, logger } = deps;
  if (secrets.length === 0) logger.warn('WEBHOOK_SECRETS is empty: every webhook will be refused');

  return async function receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return reply(res, 405, { error: 'method not allowed' });
    }
    const raw = await readRaw(req);
    if (raw === null) return reply(res, 413, { error: 'payload too large' });

    const header = req.headers[SIGNATURE_HEADER];
    const check = verifySignature(Array.isArray(header) ? header.join(',') : header, raw, {
      secrets,
      toleranceSeconds: deps.toleranceSeconds,
      nowSeconds: deps.now ? Math.floor(deps.now() / 1000) : undefined,
    });
    if (!check.ok) {
      // The reason only: never the header, the body or a secret.
      logger.warn({ reason: check.reason, remote: req.socket.remoteAddress }, 'webhook refused: bad signature');
      return reply(res, check.reason === 'missing' || check.reason === 'malformed' ? 400 : 401, { error: 'invalid signature' });
    }

    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      logger.warn('webhook refused: body is not JSON');
      return reply(res, 400, { error: 'invalid JSON' });
    }
    const parsed = webhookPayloadSchema.safeParse(json);
    if (!parsed.success) {
      logger.warn({ issues: parsed.error.issues.map((i) => i.path.join('.')) }, 'webhook refused: not an event');
      return reply(res, 400, { error: 'not an event' });
    }
    const event = toPaymentEvent(parsed.data);

    let current: boolean;
    try {
      if (!(await ledger.claim(event.accountId, event.id))) {
        logger.debug({ eventId: event.id }, 'duplicate webhook delivery acknowledged');
        return reply(res, 200, { received: true, duplicate: true });
      }
      current = event.objectId === null ? true : await ledger.advance(`${event.accountId}:${event.object}:${event.objectId}`, versionOf(event));
    } catch (error) {
      // The store is unreachable: let the upstream retry later rather than lose the event.
      logger.error({ err: error, eventId: event.id }, 'webhook not recorded: delivery store failed');
      return reply(res, 503, { error: 'try again later' });
    }

    reply(res, 200, { received: true, duplicate: false });
    if (!current) logger.info({ eventId: event.id, type: event.type }, 'out-of-order webhook: published as an event, not as a state change');
    setImmediate(() => {
      bus.publish({ ...event, current }).catch(async (error: unknown) => {
        logger.error({ err: error, eventId: event.id }, 'webhook event could not be published');
        await ledger.release(event.accountId, event.id).catch(() => undefined);
      });
    });
  };
}

function readRaw(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_WEBHOOK_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_WEBHOOK_BYTES ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
