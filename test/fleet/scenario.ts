/**
 * One fleet scenario on any Redis topology: three gateway processes, signed webhooks posted to the first,
 * subscribers and keyed payments on the other two, a master SIGKILLed under load. It counts, rather than samples:
 * events approved / seen by their subscriber / lost / seen twice, and keyed payments sent / created upstream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { factories } from '../support/factories.js';
import { newKey } from '../support/harness.js';
import { startInstances, type GatewayInstance } from '../realtime/processes.js';
import { postWebhook, sleep, subscribeLive, transactionEvent, wsClient, type Subscription } from '../realtime/support.js';
import { CREATE_PAYOUT, payoutInput, payoutsWithReference, post } from '../resilience/support.js';

export const SECRET = 'whsec_fleet_shared_by_every_instance';

/** A payments API that ignores Idempotency-Key: the gateway's own records are all that stands between a retry and a second payout. */
export async function startKeyIgnoringUpstream(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length', 'idempotency-key'].includes(name)) headers[name] = value;
      }
      fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined })
        .then(async (up) => res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await up.arrayBuffer())))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

export interface Fleet {
  emulator: RunningEmulator;
  upstream: { url: string; close(): Promise<void> };
  gateways: GatewayInstance[];
  stop(): Promise<void>;
}

export async function startFleet(redisEnv: Record<string, string>, count = 3): Promise<Fleet> {
  const emulator = await startEmulator({ port: 0, settleMs: 60_000 });
  const upstream = await startKeyIgnoringUpstream(emulator.url);
  const env = { ...redisEnv, PAYMENTS_API_URL: upstream.url, WEBHOOK_SECRETS: SECRET, LOG_LEVEL: 'info', RECONCILE_READS_PER_SECOND: '0' };
  const gateways = await startInstances(env, count);
  return {
    emulator,
    upstream,
    gateways,
    async stop() {
      await Promise.all(gateways.map((g) => g.process.stop()));
      await upstream.close();
      await emulator.stop();
    },
  };
}

const UPDATED = `subscription ($id: ID) { transactionUpdated(id: $id) { id status } }`;

interface Watched {
  accountId: number;
  transaction: Record<string, unknown> & { id: number };
  sub: Subscription<{ transactionUpdated: { status: string } }>;
}

export interface Tally {
  approved: number;
  seen: number;
  lost: number;
  twice: number;
  refusedWhileFailing: number;
  payments: number;
  created: number;
  doubled: number;
  refusedPayments: number;
  /** Whether any gateway's /readyz named Redis degraded while the fault ran, and which still did once it was over. */
  degradedSeen: boolean;
  degradedAfter: number[];
}

/** /readyz's degraded list (the detail a sandbox gateway shows anyone). */
async function degraded(gateway: GatewayInstance): Promise<string[]> {
  const answer = await fetch(`http://127.0.0.1:${gateway.port}/readyz`).catch(() => null);
  const body = (await answer?.json().catch(() => null)) as { degraded?: string[] } | null;
  return body?.degraded ?? [];
}

/** Posts like a provider: a refusal (503, a reset) is redelivered until taken. */
async function deliver(port: number, body: string, refused: { count: number }): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const answer = await postWebhook(port, body, { secret: SECRET }).catch(() => ({ status: 0 }));
    if (answer.status === 200) return;
    refused.count += 1;
    await sleep(100);
  }
  throw new Error('a webhook was never taken');
}

/** A keyed payout, retried with its key until answered; the answer's payout id. */
async function keyedPayout(gateway: GatewayInstance, apiKey: string, idempotencyKey: string, reference: string, refused: { count: number }): Promise<string> {
  const codes = new Map<string, number>();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const answer = await post<{ createPayout: { payout: { id: string } | null } }>(`http://127.0.0.1:${gateway.port}/graphql`, CREATE_PAYOUT, { input: payoutInput(1000, reference), key: idempotencyKey }, apiKey).catch(() => null);
    const id = answer?.data?.createPayout?.payout?.id;
    if (id) return id;
    const code = String((answer as { errors?: { extensions?: { code?: string } }[] } | null)?.errors?.[0]?.extensions?.code ?? 'no answer');
    codes.set(code, (codes.get(code) ?? 0) + 1);
    refused.count += 1;
    await sleep(100);
  }
  throw new Error(`a keyed payout was never answered (${JSON.stringify([...codes])}); the gateway's last lines:\n${gateway.process.output().split('\n').slice(-15).join('\n')}`);
}

/**
 * `accounts` keys, each with `perAccount` transactions watched on gateways 1 and 2; webhooks approving them all go
 * to gateway 0, and each account makes `payments` keyed payouts, every one sent on gateway 1 then retried on 2,
 * while `fault` runs once a third of the webhooks are in.
 */
export async function runScenario(fleet: Fleet, options: { accounts: number; perAccount: number; payments: number; fault: () => Promise<void> }): Promise<Tally> {
  const [a, b, c] = fleet.gateways as [GatewayInstance, GatewayInstance, GatewayInstance];
  const watched: Watched[] = [];
  const keys: string[] = [];
  const clients: { close(): Promise<void> }[] = [];
  for (let i = 0; i < options.accounts; i += 1) {
    const key = newKey(`fleet${i}`);
    keys.push(key);
    const f = factories(fleet.emulator, key);
    const accounts = (await f.rest('GET', '/v1/accounts')) as Record<string, { id: number }[]>;
    const accountId = (accounts['v1/accounts'] ?? (accounts as unknown as { id: number }[]))[0]!.id;
    const on = i % 2 === 0 ? b : c;
    const { client, connected } = wsClient(on.wsUrl, key);
    await connected;
    clients.push({ close: () => client.dispose() as Promise<void> });
    for (let j = 0; j < options.perAccount; j += 1) {
      const customer = await f.customer();
      const transaction = await f.transaction({ customer: { id: customer.id } });
      const sub = await subscribeLive<{ transactionUpdated: { status: string } }>(on.wsUrl, client, UPDATED, { id: String(transaction.id) });
      watched.push({ accountId, transaction, sub });
    }
  }
  const refusedWebhooks = { count: 0 };
  const refusedPayments = { count: 0 };
  const at = Math.floor(watched.length / 3);
  let watching = false;
  let degradedSeen = false;
  const readiness = (async () => {
    while (!watching) await sleep(20);
    while (watching) {
      const lists = await Promise.all(fleet.gateways.map(degraded));
      if (lists.some((list) => list.includes('redis'))) degradedSeen = true;
      await sleep(100);
    }
  })();
  const webhooks = (async () => {
    for (let i = 0; i < watched.length; i += 1) {
      if (i === at) {
        watching = true;
        await options.fault();
        watching = false;
      }
      const w = watched[i]!;
      const body = transactionEvent({ accountId: w.accountId, transaction: { ...w.transaction, status: 'approved', updated_at: new Date(Date.now() + 1000).toISOString() } });
      await deliver(a.port, body, refusedWebhooks);
    }
  })();
  const references: { key: string; reference: string }[] = [];
  const payments = Promise.all(
    keys.map(async (apiKey, i) => {
      for (let p = 0; p < options.payments; p += 1) {
        const reference = `fleet-${i}-${p}-${Date.now()}`;
        references.push({ key: apiKey, reference });
        const idempotencyKey = `pay-${reference}`;
        const first = await keyedPayout(b, apiKey, idempotencyKey, reference, refusedPayments);
        const retry = await keyedPayout(c, apiKey, idempotencyKey, reference, refusedPayments);
        if (first !== retry) throw new Error(`the retry of ${reference} answered payout ${retry}, not ${first}`);
      }
    }),
  );
  await Promise.all([webhooks, payments]);
  watching = false;
  await readiness;
  // Back without a restart: every gateway's connections up again (a wait, not a measure).
  let degradedAfter: number[] = [];
  for (const until = Date.now() + 20_000; Date.now() < until; await sleep(200)) {
    const lists = await Promise.all(fleet.gateways.map(degraded));
    degradedAfter = lists.flatMap((list, i) => (list.includes('redis') ? [i] : []));
    if (degradedAfter.length === 0) break;
  }
  // Every approval taken; give the log a moment to reach every reader.
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && watched.some((w) => !w.sub.values.some((v) => v.transactionUpdated.status === 'APPROVED'))) await sleep(100);
  await sleep(300);
  const approvals = watched.map((w) => w.sub.values.filter((v) => v.transactionUpdated.status === 'APPROVED').length);
  let created = 0;
  let doubled = 0;
  for (const { key, reference } of references) {
    const n = await payoutsWithReference({ emulator: fleet.emulator }, key, reference);
    created += n;
    if (n > 1) doubled += 1;
  }
  await Promise.all(clients.map((client) => client.close()));
  return {
    approved: watched.length,
    seen: approvals.filter((n) => n >= 1).length,
    lost: approvals.filter((n) => n === 0).length,
    twice: approvals.filter((n) => n > 1).length,
    refusedWhileFailing: refusedWebhooks.count,
    payments: references.length,
    created,
    doubled,
    refusedPayments: refusedPayments.count,
    degradedSeen,
    degradedAfter,
  };
}
