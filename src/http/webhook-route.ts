/** `POST /webhooks/payments`: the HTTP side of the webhook receiver (src/realtime/receiver.ts). */
import type http from 'node:http';
import { createWebhookIntake, SIGNATURE_HEADER, type IntakeResult, type ReceiverDeps } from '../realtime/receiver.js';
import { BodyTooLarge, readBody, refuseTooLarge, refuseUnread, sendJson } from './body.js';

/** Events are small: the upstream's snapshot of one object. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

export interface WebhookRouteDeps extends ReceiverDeps {
  /** WEBHOOK_MAX_BODY_BYTES: a longer body is refused 413 before any signature work. */
  maxBodyBytes?: number;
  onResult?(result: IntakeResult): void;
}

export function createWebhookReceiver(deps: WebhookRouteDeps) {
  const intake = createWebhookIntake(deps);
  const maxBodyBytes = deps.maxBodyBytes ?? MAX_WEBHOOK_BYTES;
  return async function receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, { error: 'method not allowed' });
    }
    const header = req.headers[SIGNATURE_HEADER];
    const signatureHeader = Array.isArray(header) ? header.join(',') : header;
    const remoteAddress = req.socket.remoteAddress;
    // Cheapest first: no well-formed signature header, no body read; then a body over the cap, 413 before any HMAC.
    const refused = intake.precheck(signatureHeader, remoteAddress);
    if (refused) {
      deps.onResult?.(refused.result);
      // A body declared within the cap Node discards itself, keeping the connection; any other is not read to its end.
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared <= maxBodyBytes) return sendJson(res, refused.status, refused.body);
      return refuseUnread(req, res, refused.status, refused.body);
    }
    const raw = await readBody(req, maxBodyBytes);
    if (raw instanceof BodyTooLarge) {
      deps.onResult?.('too_large');
      return refuseTooLarge(req, res, { error: 'payload too large' });
    }
    const result = await intake.receive({ raw, signatureHeader, remoteAddress });
    deps.onResult?.(result.result);
    sendJson(res, result.status, result.body);
  };
}
