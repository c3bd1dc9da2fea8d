/**
 * The live rehearsal of docs/deployment.md, end to end: the production build
 * (plain node, no tsx) with PAYMENTS_ENV=live and NODE_ENV=production, in
 * front of the emulator run as its own process with EMULATOR_LIVE_REHEARSAL=true.
 * The webhook is registered through the API with the live key and its secret
 * put in WEBHOOK_SECRETS, as with the provider; a payment is made, the
 * emulator's signed webhook reaches the gateway, and a WebSocket subscriber
 * sees the payment approved. Reconciliation is held off, so only the webhook
 * can bring the change.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayReady } from '../realtime/processes.js';
import { subscribe, wsClient } from '../realtime/support.js';
import { freePort } from '../support/tools.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Its own build directory (under the ignored dist/), so the production-build suite's `npm run build` beside it writes elsewhere. */
const OUT = join(ROOT, 'dist', `rehearsal-${process.pid}`);
const LIVE_KEY = 'sk_live_rehearsal_merchant';

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** Runs `args` with exactly `env` (and PATH) until `ready` matches its output. */
function start(args: string[], env: Record<string, string>, ready: (out: string) => boolean): Promise<Started> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start:\n${out}`)), 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

async function stop(started: Started | undefined): Promise<number | null> {
  const child = started?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('the live rehearsal: the production build with PAYMENTS_ENV=live against the emulator in rehearsal mode', () => {
  let emulator: Started;
  let gateway: Started;
  let emulatorUrl: string;
  let url: string;
  const opsToken = randomBytes(24).toString('hex');

  beforeAll(async () => {
    const built = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', OUT], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`the build failed:\n${built.stdout}\n${built.stderr}`);
    // What `npm run build` copies beside the compiled code.
    cpSync(join(ROOT, 'explorer/assets'), join(OUT, 'explorer/assets'), { recursive: true });
    cpSync(join(ROOT, 'schema'), join(OUT, 'schema'), { recursive: true });

    const emulatorPort = await freePort();
    emulator = await start([join(OUT, 'emulator/main.js')], { EMULATOR_LIVE_REHEARSAL: 'true', EMULATOR_PORT: String(emulatorPort), EMULATOR_SETTLE_MS: '300', LOG_LEVEL: 'warn' }, (out) =>
      out.includes('Payments API emulator listening on'),
    );
    emulatorUrl = `http://127.0.0.1:${emulatorPort}`;

    // Step 2 of going live, against the rehearsal: register the gateway's webhook route and take the secret it gives.
    const port = await freePort();
    const registered = await fetch(`${emulatorUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${LIVE_KEY}` },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/webhooks/payments` }),
    });
    expect(registered.status).toBe(201);
    const { secret } = ((await registered.json()) as { 'v1/webhook': { secret: string } })['v1/webhook'];

    gateway = await start(
      [join(OUT, 'src/main.js')],
      {
        NODE_ENV: 'production',
        PAYMENTS_ENV: 'live',
        PAYMENTS_API_URL: emulatorUrl,
        WEBHOOK_SECRETS: secret,
        OPS_TOKEN: opsToken,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        // Reconciliation would read the change too: held off, only the webhook can bring it.
        RECONCILE_INITIAL_MS: '600000',
        RECONCILE_MAX_MS: '600000',
      },
      (out) => gatewayReady(out) !== null,
    );
    url = gatewayReady(gateway.output())!.url;
  }, 300_000);

  afterAll(async () => {
    await stop(gateway);
    await stop(emulator);
    rmSync(OUT, { recursive: true, force: true });
  });

  const gql = async (query: string, variables: Record<string, unknown>, key = LIVE_KEY) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ query, variables }) });
    return (await res.json()) as { data?: Record<string, { transaction: { id: string; status: string } | null; userErrors: unknown[] }>; errors?: { extensions: { code: string } }[] };
  };

  it('says loudly that the emulator rehearses, and the gateway runs live', () => {
    expect(emulator.output()).toContain('LIVE REHEARSAL (EMULATOR_LIVE_REHEARSAL=true): sk_live_ keys are accepted.');
    expect(gateway.output()).toContain('"env":"live"');
    // The secret it was given never reaches its log.
    expect(gateway.output()).not.toMatch(/wh_live_/);
  });

  it('pays: the emulator signs its webhook, the gateway takes it, and a WebSocket subscriber sees APPROVED', async () => {
    const created = await gql(
      'mutation ($input: CreateTransactionInput!) { createTransaction(input: $input) { transaction { id status } userErrors { message } } }',
      { input: { amountDecimal: '2500', currency: { iso: 'XOF' }, description: 'Rehearsal order', customer: { firstname: 'Ama', lastname: 'Mensah', email: 'ama.rehearsal@example.com' } } },
    );
    expect(created.errors).toBeUndefined();
    const { id, status } = created.data!.createTransaction!.transaction!;
    expect(status).toBe('PENDING');

    const { client } = wsClient(url.replace(/^http/, 'ws'), LIVE_KEY);
    try {
      const sub = subscribe<{ transactionUpdated: { id: string; status: string } }>(client, 'subscription ($id: ID) { transactionUpdated(id: $id) { id status } }', { id });
      // The subscription starts with the current state: from then on it is listening.
      expect((await sub.nth(1, 10_000)).transactionUpdated).toEqual({ id, status: 'PENDING' });

      const sent = await gql(
        'mutation ($id: ID!, $phone: PhoneNumberInput!) { sendTransaction(id: $id, mode: "mtn", phoneNumber: $phone) { transaction { id status } userErrors { message } } }',
        { id, phone: { number: '64000001', country: 'BJ' } },
      );
      expect(sent.errors).toBeUndefined();
      expect(sent.data!.sendTransaction!.userErrors).toEqual([]);

      await expect.poll(() => sub.values.map((v) => v.transactionUpdated.status).at(-1), { timeout: 15_000 }).toBe('APPROVED');
    } finally {
      await client.dispose();
    }

    // The emulator signed and delivered it to the gateway's route, which answered 2xx and counted it accepted.
    const { deliveries } = (await (await fetch(`${emulatorUrl}/_emulator/deliveries`)).json()) as { deliveries: { event_type: string; url: string; ok: boolean; signature: string; entity?: unknown }[] };
    const approved = deliveries.filter((d) => d.event_type === 'transaction.approved' && d.url.endsWith('/webhooks/payments'));
    expect(approved.length).toBeGreaterThan(0);
    expect(approved.every((d) => d.ok && /^t=\d+,s=[0-9a-f]{64}$/.test(d.signature))).toBe(true);
    const metrics = await (await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${opsToken}` } })).text();
    expect(Number(/gateway_webhooks_received_total\{result="accepted"\} (\d+)/.exec(metrics)?.[1] ?? 0)).toBeGreaterThan(0);
    expect(metrics).not.toMatch(/gateway_webhooks_received_total\{result="bad_signature"\} [1-9]/);
  }, 60_000);

  it('refuses a sandbox key, as the live gateway must', async () => {
    const answer = await gql('{ transactions(first: 1) { totalCount } }', {}, 'sk_sandbox_demo');
    expect(answer.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  });

  it('both stop cleanly on SIGTERM', async () => {
    expect(await stop(gateway)).toBe(0);
    expect(await stop(emulator)).toBe(0);
  });
});
