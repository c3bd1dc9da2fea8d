/** Production mode cannot leak the sandbox, the schema or resolver timings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newKey, startStack, type Stack } from '../support/harness.js';
import { runMainToExit, spawnMain, welcomePrinted } from '../realtime/processes.js';

describe('production start-up', () => {
  it('NODE_ENV=production without PAYMENTS_API_URL exits 1 naming it, and starts no emulator', async () => {
    const { code, output } = await runMainToExit({ NODE_ENV: 'production', PORT: '0' });
    expect(code).toBe(1);
    expect(output).toContain('PAYMENTS_API_URL: is required when NODE_ENV=production');
    expect(output).not.toContain('Sandbox key');
  });
});

describe('the embedded emulator', () => {
  it('listens on loopback only and its admin API needs the token printed at start', async () => {
    const gateway = await spawnMain({ EMULATOR_HOST: '0.0.0.0' }, (out) => {
      const emulator = /Emulator\s+(http:\/\/\S+)/.exec(out)?.[1];
      const token = /x-emulator-admin-token: (\S+)\)/.exec(out)?.[1];
      return welcomePrinted(out) && emulator && token ? { emulator, token } : null;
    });
    try {
      const { emulator: emulatorUrl, token } = gateway.found as { emulator: string; token: string };
      expect(new URL(emulatorUrl).hostname).toBe('127.0.0.1');
      expect((await fetch(`${emulatorUrl}/_emulator/stats`)).status).toBe(401);
      expect((await fetch(`${emulatorUrl}/_emulator/stats`, { headers: { 'x-emulator-admin-token': 'wrong' } })).status).toBe(401);
      expect((await fetch(`${emulatorUrl}/_emulator/stats`, { headers: { 'x-emulator-admin-token': token } })).status).toBe(200);
    } finally {
      await gateway.stop();
    }
  });
});

describe('a production gateway', () => {
  let stack: Stack;
  const key = newKey('prod');
  const routerSecret = 'router-secret-0123456789';
  beforeAll(async () => {
    stack = await startStack({ env: { NODE_ENV: 'production', ROUTER_SHARED_SECRET: routerSecret, RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('refuses introspection, and serves the federation SDL to the router (its secret) only', async () => {
    const intro = await stack.gql('{ __schema { queryType { name } } }', {}, key);
    expect(intro.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const askSdl = (headers: Record<string, string>) =>
      fetch(stack.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: '{ _service { sdl } }' }) }).then(
        (r) => r.json() as Promise<{ data?: { _service: { sdl: string } } | null; errors?: { message: string; extensions?: { code?: string } }[] }>,
      );
    const strangers: Record<string, string>[] = [{}, { authorization: `Bearer ${key}` }, { 'x-router-secret': 'not-the-secret-000000' }];
    for (const stranger of strangers) {
      const refused = await askSdl(stranger);
      expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(refused.errors?.[0]).toMatchObject({ message: expect.stringContaining('x-router-secret') });
      expect(refused.data?._service).toBeUndefined();
    }
    const router = await askSdl({ 'x-router-secret': routerSecret });
    expect(router.data!._service.sdl).toContain('type Transaction');
  });

  it('gives no "Did you mean" hints', async () => {
    const res = await stack.gql('{ transactoin(id: "1") { id } }', {}, key);
    expect(res.errors?.[0]?.message).toMatch(/Cannot query field "transactoin"/);
    expect(res.errors?.[0]?.message).not.toMatch(/Did you mean/);
  });

  it('sends inline traces (ftv1) only to a caller carrying the router secret', async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(stack.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'apollo-federation-include-trace': 'ftv1', ...headers },
        body: JSON.stringify({ query: '{ currencies { iso } }' }),
      }).then((r) => r.json() as Promise<{ extensions?: { ftv1?: string } }>);
    expect((await ask({})).extensions?.ftv1).toBeUndefined();
    expect((await ask({ 'x-router-secret': 'not-the-secret-000000' })).extensions?.ftv1).toBeUndefined();
    expect((await ask({ 'x-router-secret': routerSecret })).extensions?.ftv1).toEqual(expect.any(String));
  });

  it('passes an upstream 422 message to userErrors as capped plain text', async () => {
    const html = `<h1>Invalid</h1><script>alert(1)</script>${'long '.repeat(200)}`;
    await stack.admin('POST', '/_emulator/faults', { route: 'POST /v1/customers', status: 422, body: { message: 'Invalid', errors: { email: [html] } } });
    const res = await stack.gql<{ createCustomer: { userErrors: { message: string }[] } }>(
      'mutation { createCustomer(input: { firstname: "A", lastname: "B", email: "a@example.com" }) { userErrors { message } } }',
      {},
      key,
    );
    await stack.admin('DELETE', '/_emulator/faults');
    const message = res.data!.createCustomer.userErrors[0]!.message;
    expect(message).not.toMatch(/[<>]/);
    expect(message.length).toBeLessThanOrEqual(200);
    expect(message).toMatch(/^Invalid alert\(1\) long/);
  });
});

describe('a production gateway without a router secret', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { NODE_ENV: 'production', RATE_LIMIT_PER_MINUTE: '0' } });
  });
  afterAll(() => stack.stop());

  it('serves the federation SDL to a caller whose key the payments API accepts, and tells one without a key to send one', async () => {
    const refused = await stack.gql('{ _service { sdl } }', {}, null);
    expect(refused.errors?.[0]).toMatchObject({
      message: 'The subgraph SDL is served to callers with an API key the payments API accepts: send "Authorization: Bearer <secret API key>".',
      extensions: { code: 'UNAUTHENTICATED' },
    });
    const served = await stack.gql<{ _service: { sdl: string } }>('{ _service { sdl } }', {}, newKey('sdl'));
    expect(served.data!._service.sdl).toContain('type Transaction');
  });

  it('hides the schema from a well-formed key the payments API does not accept, at the cost of one upstream call', async () => {
    const key = newKey('made-up');
    await stack.admin('POST', '/_emulator/keys/revoke', { apiKey: key });
    await stack.resetCounts();
    const refused = await stack.gql<{ _service: { sdl: string } | null }>('{ _service { sdl } }', {}, key);
    expect(refused.data?._service ?? null).toBeNull();
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(JSON.stringify(refused)).not.toContain('type Transaction');
    expect(await stack.upstreamCalls()).toBe(1);
    // Refused at once from then on, with no upstream call and no parse.
    const again = await stack.gql('{ _service { sdl } }', {}, key);
    expect(again.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await stack.upstreamCalls()).toBe(1);
  });
});

describe('operational endpoints of a production gateway', () => {
  const opsToken = 'ops-token-0123456789abcdef';
  const get = (stack: Stack, path: string, headers: Record<string, string> = {}) => fetch(new URL(path, stack.gateway.url), { headers });

  describe('without OPS_TOKEN', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: { NODE_ENV: 'production', RATE_LIMIT_PER_MINUTE: '0' } });
    });
    afterAll(() => stack.stop());

    it('answers /healthz and /readyz with their status only, and refuses /metrics on the public port saying OPS_TOKEN opens it', async () => {
      const health = await get(stack, '/healthz');
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await get(stack, '/readyz');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready' });
      // No token was set, so none opens it: 403 naming what would, not a 404 that hides the route.
      for (const headers of [{}, { authorization: `Bearer ${opsToken}` }] as Record<string, string>[]) {
        const metrics = await get(stack, '/metrics', headers);
        expect(metrics.status).toBe(403);
        const body = (await metrics.json()) as { error: string };
        expect(body.error).toMatch(/^metrics are closed until OPS_TOKEN is set/);
        expect(body.error).not.toContain('gateway_');
      }
      expect(stack.gateway.metricsClosed).toMatch(/^closed until OPS_TOKEN is set/);
    });
  });

  describe('with OPS_TOKEN', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: { NODE_ENV: 'production', RATE_LIMIT_PER_MINUTE: '0', OPS_TOKEN: opsToken } });
      // Traffic, so that there is something to hide.
      await stack.gql('query Seen { __typename }', {}, newKey('ops'));
    });
    afterAll(() => stack.stop());

    it('serves /metrics and the health detail to the token only', async () => {
      expect(stack.gateway.metricsClosed).toBeNull();
      const strangers: Record<string, string>[] = [{}, { authorization: 'Bearer ops-token-0123456789abcdeX' }, { authorization: opsToken }, { authorization: `Bearer ${newKey('api')}` }];
      for (const stranger of strangers) {
        const metrics = await get(stack, '/metrics', stranger);
        expect(metrics.status).toBe(401);
        expect(await metrics.text()).not.toContain('gateway_');
        expect(await (await get(stack, '/readyz', stranger)).json()).toEqual({ status: 'ready' });
        expect(await (await get(stack, '/healthz', stranger)).json()).toEqual({ status: 'ok' });
      }
      const ops = { authorization: `Bearer ${opsToken}` };
      const metrics = await get(stack, '/metrics', ops);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('gateway_operations_total{operation="Seen"');
      expect(await (await get(stack, '/readyz', ops)).json()).toMatchObject({ status: 'ready', breakers: expect.any(Object) });
      expect(await (await get(stack, '/healthz', ops)).json()).toMatchObject({ status: 'ok', subscriptions: expect.any(Object), reconcile: expect.any(Object) });
    });
  });

  it('serves /metrics without a token on METRICS_PORT, a listener kept off the public port', async () => {
    const stack = await startStack({ env: { NODE_ENV: 'production', METRICS_PORT: '0', OPS_TOKEN: opsToken } });
    try {
      expect((await fetch(stack.gateway.metricsUrl!)).status).toBe(200);
      expect((await get(stack, '/metrics', { authorization: `Bearer ${opsToken}` })).status).toBe(404);
    } finally {
      await stack.stop();
    }
  });
});
