/**
 * Forged webhooks cost the gateway almost nothing: no log line each (one
 * warning per 10 s at most, with the count since the last), every one counted
 * in gateway_webhooks_received_total; a body over WEBHOOK_MAX_BODY_BYTES is
 * refused 413 before any signature work, and one with no signature header is
 * refused without its body being read.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { signWebhookBody } from '../../emulator/index.js';
import { createLogger } from '../../src/logger.js';
import { startGateway, upstreamFor, type RunningGateway } from '../../src/server/index.js';
import type { UpstreamClient } from '../../src/upstream/index.js';
import { logSink, parseMetrics, total } from '../observability/support.js';
import { postWebhook, transactionEvent } from '../realtime/support.js';

const SECRET = 'whsec_flood_0123456789abcdef';
const CAP = 16 * 1024;
const now = () => Math.floor(Date.now() / 1000);

describe('webhook floods', () => {
  let gateway: RunningGateway;
  let upstream: UpstreamClient;
  const sink = logSink();
  const webhooks = async (result: string) => {
    const res = await fetch(gateway.metricsUrl!);
    return total(parseMetrics(await res.text()), 'gateway_webhooks_received_total', { result });
  };
  const warnings = () => sink.lines().filter((l) => l['level'] === 40 && String(l['msg']).includes('webhook refused'));

  beforeAll(async () => {
    // Nothing is ever read upstream here: the address only has to be valid.
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PAYMENTS_API_URL: 'http://127.0.0.1:9', WEBHOOK_SECRETS: SECRET, WEBHOOK_MAX_BODY_BYTES: String(CAP), LOG_LEVEL: 'info' });
    upstream = upstreamFor(config, 'http://127.0.0.1:9');
    gateway = await startGateway({ config, upstream, logger: createLogger('info', { destination: sink }) });
  });
  afterAll(async () => {
    await gateway.stop();
    upstream.close();
  });

  it('1,000 bad signatures: each refused and counted, a warning line or two in all, no secret in them', async () => {
    const body = transactionEvent({ accountId: 1, transaction: { id: 1, status: 'approved', amount: 1000, updated_at: '2024-05-01T10:00:00.000Z', customer_id: null } });
    const before = await webhooks('bad_signature');
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 20; batch++) {
      const sent = await Promise.all(
        Array.from({ length: 50 }, (_, i) => postWebhook(gateway.port, body, i % 2 === 0 ? { secret: 'whsec_attacker' } : { header: null })),
      );
      for (const { status } of sent) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }

    expect(statuses).toEqual(new Map([[401, 500], [400, 500]]));
    expect((await webhooks('bad_signature')) - before).toBe(1_000);
    expect(warnings().length).toBeGreaterThanOrEqual(1);
    expect(warnings().length).toBeLessThanOrEqual(2);
    expect(warnings()[0]).toMatchObject({ refused: expect.any(Number), reason: expect.any(String) });
    expect(JSON.stringify(sink.lines())).not.toContain(SECRET);
  });

  it('a body over the cap: 413 from Content-Length, before any signature work', async () => {
    const body = JSON.stringify({ pad: 'x'.repeat(CAP) });
    const [tooLarge, badSignature, accepted] = [await webhooks('too_large'), await webhooks('bad_signature'), await webhooks('accepted')];

    // Signed with the right secret: had its signature been checked, it would pass.
    const res = await postWebhook(gateway.port, body, { header: signWebhookBody(SECRET, body, now()) });

    expect(res.status).toBe(413);
    expect((await webhooks('too_large')) - tooLarge).toBe(1);
    expect(await webhooks('bad_signature')).toBe(badSignature);
    expect(await webhooks('accepted')).toBe(accepted);
  });

  it('a chunked body over the cap: 413 at the chunk that crosses it, before any signature work', async () => {
    const tooLarge = await webhooks('too_large');
    const chunk = 'x'.repeat(4 * 1024);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`http://127.0.0.1:${gateway.port}/webhooks/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-fedapay-signature': signWebhookBody(SECRET, chunk, now()), 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      // Sent chunk by chunk, far past the cap, unless the gateway answers first.
      let sent = 0;
      const more = () => {
        while (sent < 64 && !req.destroyed) {
          sent += 1;
          if (!req.write(chunk)) return void req.once('drain', more);
        }
        req.end();
      };
      more();
    });

    expect(status).toBe(413);
    expect((await webhooks('too_large')) - tooLarge).toBe(1);
  });
});
