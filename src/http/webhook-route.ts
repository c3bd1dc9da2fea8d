/** `POST /webhooks/payments`: the HTTP side of the webhook receiver (src/realtime/receiver.ts). */
import type http from 'node:http';
import { createWebhookIntake, SIGNATURE_HEADER, type IntakeResult, type ReceiverDeps } from '../realtime/receiver.js';
import { BodyTooLarge, readBody, refuseTooLarge, sendJson } from './body.js';

/** Events are small; the upstream's largest snapshot is a few kilobytes. */
const MAX_WEBHOOK_BYTES = 256 * 1024;

export interface WebhookRouteDeps extends ReceiverDeps {
  /** Told what became of each delivery (metrics). */
  onResult?(result: IntakeResult): void;
}

export function createWebhookReceiver(deps: WebhookRouteDeps) {
  const intake = createWebhookIntake(deps);
  return async function receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendJson(res, 405, { error: 'method not allowed' });
    }
    const raw = await readBody(req, MAX_WEBHOOK_BYTES);
    if (raw instanceof BodyTooLarge) return refuseTooLarge(req, res, { error: 'payload too large' });
    const header = req.headers[SIGNATURE_HEADER];
    const result = await intake({
      raw,
      signatureHeader: Array.isArray(header) ? header.join(',') : header,
      remoteAddress: req.socket.remoteAddress,
    });
    deps.onResult?.(result.result);
    sendJson(res, result.status, result.body);
    result.afterReply?.();
  };
}
