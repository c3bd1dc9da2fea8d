/**
 * Webhook delivery: each event is POSTed as JSON to every enabled webhook of its
 * account (and to EMULATOR_FORWARD_TO), signed with
 * `X-FEDAPAY-SIGNATURE: t=<unix seconds>,s=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 * A failed attempt (network error, time-out, non-2xx) is retried after
 * retryBaseMs * 2^(attempt-1), up to maxAttempts, except for a webhook with
 * `disable_on_error`: its first failure disables it and drops its pending retries.
 * Delivery is at least once and unordered, like the real service.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { EmulatorLogger } from './options.js';
import type { Scheduler } from './scheduler.js';
import type { WebhookRow } from './store.js';

export function signWebhookBody(secret: string, body: string, unixSeconds: number): string {
  const s = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},s=${s}`;
}

export interface DeliveryTarget {
  url: string;
  secret: string;
  sslVerify: boolean;
  /** null for the EMULATOR_FORWARD_TO target. */
  webhook: WebhookRow | null;
}

export interface DeliveryRecord {
  event_id: number;
  event_type: string;
  webhook_id: number | null;
  url: string;
  attempt: number;
  /** The X-FEDAPAY-SIGNATURE header sent (an HMAC, not the secret). */
  signature: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  at: string;
}

export interface DispatcherDeps {
  scheduler: Scheduler;
  retryBaseMs: number;
  maxAttempts: number;
  timeoutMs: number;
  logger: EmulatorLogger | undefined;
  /** Whether the webhook still exists and is enabled. */
  isActive(webhook: WebhookRow): boolean;
  disable(webhook: WebhookRow): void;
}

const MAX_RECORDS = 1000;

export class WebhookDispatcher {
  private readonly inflight = new Set<http.ClientRequest>();
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 16 });
  private records: DeliveryRecord[] = [];
  private stopped = false;

  constructor(private readonly deps: DispatcherDeps) {}

  deliver(eventId: number, eventType: string, body: string, targets: readonly DeliveryTarget[]): void {
    for (const target of targets) void this.attempt(target, eventId, eventType, body, 1);
  }

  deliveries(): readonly DeliveryRecord[] {
    return this.records;
  }

  clearRecords(): void {
    this.records = [];
  }

  /** Aborts requests in flight (timers are the scheduler's to clear). */
  abortAll(): void {
    for (const req of this.inflight) req.destroy();
    this.inflight.clear();
  }

  close(): void {
    this.stopped = true;
    this.abortAll();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private async attempt(target: DeliveryTarget, eventId: number, eventType: string, body: string, n: number): Promise<void> {
    if (this.stopped) return;
    if (target.webhook && !this.deps.isActive(target.webhook)) return;
    const t = Math.floor(Date.now() / 1000);
    let status: number | null = null;
    let error: string | null = null;
    const signature = signWebhookBody(target.secret, body, t);
    try {
      status = await this.post(target, body, signature, eventId, n);
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    if (this.stopped) return;
    const ok = error === null;
    this.records.push({
      event_id: eventId,
      event_type: eventType,
      webhook_id: target.webhook?.id ?? null,
      url: target.url,
      attempt: n,
      signature,
      ok,
      status,
      error,
      at: new Date().toISOString(),
    });
    if (this.records.length > MAX_RECORDS) this.records.splice(0, this.records.length - MAX_RECORDS);
    if (ok) return;
    this.deps.logger?.debug({ eventId, attempt: n, status, error }, 'webhook delivery failed');
    if (target.webhook?.disable_on_error) {
      this.deps.disable(target.webhook);
      return;
    }
    if (n >= this.deps.maxAttempts) return;
    this.deps.scheduler.after(this.deps.retryBaseMs * 2 ** (n - 1), () => {
      void this.attempt(target, eventId, eventType, body, n + 1);
    });
  }

  private post(target: DeliveryTarget, body: string, signature: string, eventId: number, n: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const url = new URL(target.url);
      const isHttps = url.protocol === 'https:';
      const req = (isHttps ? https : http).request(url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        timeout: this.deps.timeoutMs,
        rejectUnauthorized: target.sslVerify,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'payments-emulator-webhooks/1',
          'x-fedapay-signature': signature,
          'x-emulator-event-id': String(eventId),
          'x-emulator-delivery-attempt': String(n),
        },
      });
      this.inflight.add(req);
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          this.inflight.delete(req);
          resolve(res.statusCode ?? 0);
        });
        res.on('error', (e) => {
          this.inflight.delete(req);
          reject(e);
        });
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => {
        this.inflight.delete(req);
        reject(e);
      });
      req.end(body);
    });
  }
}
