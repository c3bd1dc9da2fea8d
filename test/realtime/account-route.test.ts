/**
 * `GET /v1/accounts` is beyond the spec (docs/upstream.md, Calls beyond the
 * spec), yet a subscription connection needs the caller's account. An
 * upstream without it refuses the connection with a code that says so, not
 * as "unavailable, try again later".
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newKey } from '../support/harness.js';
import { startRealtimeStack, wsClient, type RealtimeStack } from './support.js';

describe('subscriptions against an upstream without GET /v1/accounts', () => {
  let stack: RealtimeStack;

  beforeAll(async () => {
    stack = await startRealtimeStack({ forward: false });
  });
  afterEach(() => stack.emulator.clearFaults());
  afterAll(() => stack.stop());

  const withoutAccounts = (status: number) => stack.emulator.addFault({ route: 'GET /v1/accounts', status, times: 10 });

  it.each([404, 405])('closes a WebSocket connection with 4502 when the upstream answers %i', async (status) => {
    withoutAccounts(status);
    const { closed } = wsClient(stack.wsUrl, newKey('no_accounts'));
    expect(await closed).toMatchObject({ code: 4502, reason: 'The payments API does not offer GET /v1/accounts' });
  });

  it('still closes with 1013 when the account read fails for a reason that may pass', async () => {
    withoutAccounts(503);
    const { closed } = wsClient(stack.wsUrl, newKey('accounts_down'));
    expect((await closed).code).toBe(1013);
  });

  it('refuses an SSE stream with 502 UPSTREAM_UNSUPPORTED', async () => {
    withoutAccounts(404);
    const res = await fetch(`http://127.0.0.1:${stack.gateway.port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${newKey('sse_no_accounts')}` },
      body: JSON.stringify({ query: 'subscription { paymentEvent { id } }' }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors[0]).toMatchObject({
      message: 'The payments API does not offer GET /v1/accounts, which event streams need.',
      extensions: { code: 'UPSTREAM_UNSUPPORTED' },
    });
  });
});
