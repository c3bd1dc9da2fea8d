/**
 * The upstream's webhooks, as a provider sends them: the emulator's own events (forwarded to a collector here),
 * posted signed to one gateway by three senders, each redelivered until it is answered 2xx. Every refusal is
 * counted with its time: a 503 (the gateway could not keep it) or no answer at all (the gateway is down).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningEmulator } from '../../emulator/index.js';
import { postWebhook, sleep } from '../realtime/support.js';
import { WEBHOOK_SECRET, type Gateway } from './world.js';

export interface Refusal {
  at: number;
  kind: 'webhook 503' | 'webhook unanswered';
}

export interface WebhookRelay {
  /** Approvals received from the emulator, by transaction id. */
  received(): Set<number>;
  /** Approvals answered 2xx, by transaction id. */
  delivered(): Set<number>;
  refusals: Refusal[];
  /** Resolves once every approval of `ids` was answered 2xx, or rejects at the deadline. */
  settled(ids: readonly number[], timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const SENDERS = 3;
/** An attempt that has no answer in this long is redelivered (a gateway stalled on Redis answers 503 within 2 s). */
const ATTEMPT_MS = 5_000;

export async function startWebhookRelay(emulator: RunningEmulator, target: () => Gateway): Promise<WebhookRelay> {
  const queue: { id: number; body: string }[] = [];
  const received = new Set<number>();
  const delivered = new Set<number>();
  const refusals: Refusal[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  let failure: Error | null = null;

  const collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const event = JSON.parse(body) as { type: string; object_id: number };
      if (event.type === 'transaction.approved' && !received.has(event.object_id)) {
        received.add(event.object_id);
        queue.push({ id: event.object_id, body });
        wake?.();
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  emulator.forwardEventsTo(`http://127.0.0.1:${(collector.address() as AddressInfo).port}/`, 'whsec_collector_only');

  const sender = async () => {
    while (!closed) {
      const next = queue.shift();
      if (!next) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
        continue;
      }
      for (;;) {
        if (closed) return;
        const answer = await Promise.race([postWebhook(target().port, next.body, { secret: WEBHOOK_SECRET }), sleep(ATTEMPT_MS).then(() => null)]).catch(() => null);
        if (answer && answer.status >= 200 && answer.status < 300) break;
        if (answer && answer.status !== 503) {
          failure ??= new Error(`webhook answered ${answer.status}: ${JSON.stringify(answer.json)}`);
          return;
        }
        refusals.push({ at: Date.now(), kind: answer ? 'webhook 503' : 'webhook unanswered' });
        await sleep(100);
      }
      delivered.add(next.id);
    }
  };
  const senders = Promise.all(Array.from({ length: SENDERS }, sender));

  return {
    received: () => received,
    delivered: () => delivered,
    refusals,
    async settled(ids, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!ids.every((id) => delivered.has(id))) {
        if (failure) throw failure;
        if (Date.now() > deadline) throw new Error(`webhooks not delivered within ${timeoutMs} ms: ${ids.filter((id) => !delivered.has(id)).length} of ${ids.length}`);
        await sleep(50);
      }
    },
    async close() {
      closed = true;
      wake?.();
      await senders;
      collector.closeAllConnections();
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    },
  };
}
