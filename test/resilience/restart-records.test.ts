/**
 * One gateway without Redis, in front of a payments API that ignores `Idempotency-Key`: the gateway is SIGKILLed
 * after the upstream created a keyed customer and the gateway answered, but before the client got the answer
 * (a proxy between them swallows it). Started again on the same data folder, the client's retry replays the
 * same customer, and the upstream created it once.
 */
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../emulator/index.js';
import { newKey } from '../support/harness.js';
import { startKeyStrippingUpstream, type KeyStrippingUpstream } from '../support/key-stripping-upstream.js';
import { gatewayReady, spawnMain, type GatewayProcess } from '../realtime/processes.js';

const CREATE = `mutation ($k: String!) { createCustomer(idempotencyKey: $k, input: { firstname: "Ada", lastname: "L", email: "ada.restart@example.com" }) { customer { id } } }`;

/** Forwards one request to the gateway and tells when its whole answer came back, which the client never gets. */
async function swallowingProxy(target: string): Promise<{ url: string; answered: Promise<string>; close(): Promise<void> }> {
  let answeredWith: (body: string) => void = () => undefined;
  const answered = new Promise<string>((resolve) => (answeredWith = resolve));
  const server = http.createServer((req, res) => {
    const forward = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        res.destroy();
        answeredWith(Buffer.concat(chunks).toString());
      });
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function create(url: string, apiKey: string, key: string): Promise<{ data?: { createCustomer: { customer: { id: string } | null } }; errors?: unknown[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ query: CREATE, variables: { k: key } }),
  });
  return (await res.json()) as never;
}

describe('a gateway without Redis SIGKILLed after a keyed create, before the client got the answer', () => {
  let emulator: RunningEmulator;
  let stripping: KeyStrippingUpstream;
  let dataDir: string;
  const started: GatewayProcess[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0 });
    stripping = await startKeyStrippingUpstream(emulator.url);
    dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-restart-'));
  });
  afterAll(async () => {
    for (const g of started) g.child.kill('SIGKILL');
    await stripping?.close();
    await emulator?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const customers = async (apiKey: string) => {
    const res = await fetch(`${emulator.url}/v1/customers?per_page=100`, { headers: { authorization: `Bearer ${apiKey}` } });
    return ((await res.json()) as { 'v1/customers': { id: number }[] })['v1/customers'];
  };

  it('replays the same customer after the restart; the upstream created it once', async () => {
    const env = { PAYMENTS_API_URL: stripping.url, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    const first = await spawnMain(env, gatewayReady);
    started.push(first);
    const proxy = await swallowingProxy(first.found.url!);
    const apiKey = newKey('restart');

    const lost = fetch(proxy.url + '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: CREATE, variables: { k: 'pay-once' } }),
    }).catch((error: unknown) => error);
    const body = JSON.parse(await proxy.answered) as { data: { createCustomer: { customer: { id: string } } } };
    const exited = once(first.child, 'exit');
    first.child.kill('SIGKILL');
    await exited;
    expect(await lost).toBeInstanceOf(Error);
    await proxy.close();
    const id = body.data.createCustomer.customer.id;
    expect((await customers(apiKey)).map((c) => String(c.id))).toEqual([id]);

    const second = await spawnMain(env, gatewayReady);
    started.push(second);
    const retry = await create(second.found.url!, apiKey, 'pay-once');

    expect(retry.errors).toBeUndefined();
    expect(retry.data!.createCustomer.customer!.id).toBe(id);
    expect((await customers(apiKey)).map((c) => String(c.id))).toEqual([id]);
    expect(stripping.stripped()).toBe(1);
    await second.stop();
  }, 60_000);
});
