/**
 * The router's callback subscriptions (subscription-callback.ts) in process:
 * the URL allowlist on its own, then `open` with a small schema run by
 * graphql-js, a fake admission and a bare HTTP server for the router's
 * callback URL — each refusal, the check handshake, and a subscription's
 * life to its end (events, revocation, shutdown).
 */
import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { asksForCallback, callbackAllowed, MAX_HEARTBEAT_MS, MIN_HEARTBEAT_MS } from '../../../src/http/subscription-callback.js';
import { caller, reasonOf, router, TICKS, useCallbackRouter, world } from './callback-world.js';

const ALLOWED = 'http://router.test/callback/';

describe('asksForCallback', () => {
  it.each([
    ['a body whose extensions name a subscription', { query: 'x', extensions: { subscription: {} } }, true],
    ['a subscription member set to null', { extensions: { subscription: null } }, true],
    ['extensions without it', { extensions: { persistedQuery: {} } }, false],
    ['extensions that are null', { extensions: null }, false],
    ['extensions that are a string', { extensions: 'subscription' }, false],
    ['no extensions', { query: 'x' }, false],
    ['an array', [{ extensions: { subscription: {} } }], false],
    ['null', null, false],
    ['a string', 'extensions', false],
  ])('%s: %s', (_label, body, expected) => {
    expect(asksForCallback(body)).toBe(expected);
  });
});

describe('callbackAllowed', () => {
  it.each([
    ['a plain id under the prefix', `${ALLOWED}sub-1`, `${ALLOWED}sub-1`],
    ['several plain segments', `${ALLOWED}a/b.c~d_e`, `${ALLOWED}a/b.c~d_e`],
    ['the host in capitals, normalised', 'http://ROUTER.test/callback/sub-1', `${ALLOWED}sub-1`],
    ['a dot segment that stays under the prefix, normalised', `${ALLOWED}x/../sub-1`, `${ALLOWED}sub-1`],
  ])('allows %s', (_label, raw, href) => {
    expect(callbackAllowed(raw, [ALLOWED])).toBe(href);
  });

  it.each([
    // Long enough that the normalised URL is longer than the prefix: a check of the raw string would let it through.
    ['a dot segment leaving the prefix for a longer path', `${ALLOWED}../admin/xyzw`],
    ['a dot segment leaving the prefix', `${ALLOWED}../admin`],
    ['the prefix as part of a longer segment', 'http://router.test/callbacks/x'],
    ['the prefix alone', ALLOWED],
    ['an empty segment', `${ALLOWED}a//b`],
    ['an encoded slash', `${ALLOWED}..%2fadmin`],
    ['a query', `${ALLOWED}x?next=/admin`],
    ['an empty query', `${ALLOWED}x?`],
    ['a fragment', `${ALLOWED}x#admin`],
    ['an empty fragment', `${ALLOWED}x#`],
    ['credentials', 'http://user:pw@router.test/callback/x'],
    ['a user name only', 'http://user@router.test/callback/x'],
    ['another scheme', 'ftp://router.test/callback/x'],
    ['something that is not a URL', 'not a url'],
    ['another host', 'http://evil.test/callback/x'],
  ])('refuses %s', (_label, raw) => {
    expect(callbackAllowed(raw, [ALLOWED])).toBeNull();
  });

  it('takes https prefixes too, and any of several', () => {
    expect(callbackAllowed('https://b.test/cb/x', ['http://a.test/cb/', 'https://b.test/cb/'])).toBe('https://b.test/cb/x');
  });

  it('refuses a URL over 2048 characters, and allows one at 2048', () => {
    const fill = (length: number) => `${ALLOWED}${'a'.repeat(length - ALLOWED.length)}`;
    expect(callbackAllowed(fill(2048), [ALLOWED])).toBe(fill(2048));
    expect(callbackAllowed(fill(2049), [ALLOWED])).toBeNull();
  });
});

useCallbackRouter();

describe('open: refusals before anything is called', () => {
  it('is off without allowed URLs', async () => {
    const answer = await world({ allowed: [] }).open();
    expect(answer).toEqual({
      status: 400,
      message: 'Subscriptions over HTTP callbacks are off on this gateway (SUBSCRIPTION_CALLBACK_URLS is unset); use GraphQL over WebSocket.',
      code: 'BAD_REQUEST',
      extra: { reason: 'CALLBACKS_OFF' },
    });
    expect(router.messages).toEqual([]);
  });

  it('takes callbacks from the router only when the router is known', async () => {
    const w = world({ routerSecret: 'shared' });
    expect(await w.open()).toEqual({ status: 403, message: 'Subscriptions over HTTP callbacks are opened by the router only.', code: 'FORBIDDEN', extra: { reason: 'NOT_FROM_ROUTER' } });
    expect(router.messages).toEqual([]);
    const answer = await w.open({}, { fromRouter: true });
    expect(answer.status).toBe(200);
    await w.subs.close();
  });

  it.each([
    ['no callbackUrl', { callbackUrl: undefined }],
    ['an empty subscriptionId', { subscriptionId: '' }],
    ['a verifier that is not a string', { verifier: 7 }],
    ['a verifier over 512 characters', { verifier: 'v'.repeat(513) }],
    ['a subscriptionId over 512 characters', { subscriptionId: 's'.repeat(513) }],
    ['a callbackUrl over 2048 characters', { callbackUrl: `${'x'.repeat(2049)}` }],
  ])('refuses an extension with %s', async (_label, extension) => {
    const answer = await world().open(extension);
    expect(answer).toMatchObject({ status: 400, code: 'BAD_REQUEST', extra: { reason: 'CALLBACK_EXTENSION_INVALID' } });
    expect((answer as { message: string }).message).toBe('extensions.subscription needs callbackUrl (at most 2048 characters), subscriptionId and verifier (at most 512 each).');
    expect(router.messages).toEqual([]);
  });

  it('refuses a subscription extension that is not an object', async () => {
    const w = world();
    const req = { headers: {}, socket: { remoteAddress: '127.0.0.1' } } as unknown as http.IncomingMessage;
    const answer = await w.subs.open(req, { query: TICKS, extensions: { subscription: 'yes' } }, caller(), false);
    expect(reasonOf(answer)).toBe('CALLBACK_EXTENSION_INVALID');
  });

  it.each([[MIN_HEARTBEAT_MS - 1], [MAX_HEARTBEAT_MS + 1], [1_000.5], ['1000'], [-1]])('refuses a heartbeat interval of %s', async (heartbeatIntervalMs) => {
    const answer = await world().open({ heartbeatIntervalMs });
    expect(answer).toMatchObject({ status: 400, extra: { reason: 'CALLBACK_EXTENSION_INVALID' } });
    expect((answer as { message: string }).message).toBe('extensions.subscription.heartbeatIntervalMs must be 0 (no heartbeats) or from 500 to 3600000.');
  });

  it('takes a verifier and an id of 512 characters', async () => {
    const w = world();
    const answer = await w.open({ verifier: 'v'.repeat(512), subscriptionId: 's'.repeat(512) });
    expect(answer.status).toBe(200);
    await w.subs.close();
  });

  it.each([[MIN_HEARTBEAT_MS], [MAX_HEARTBEAT_MS], [undefined]])('takes a heartbeat interval of %s', async (heartbeatIntervalMs) => {
    const w = world();
    const answer = await w.open({ heartbeatIntervalMs });
    expect(answer.status).toBe(200);
    await w.subs.close();
  });

  it('refuses a callbackUrl leaving the allowed prefix through a dot segment, without calling anything', async () => {
    const answer = await world().open({ callbackUrl: `${router.base}../admin/xyzw` });
    expect(answer).toEqual({
      status: 400,
      message: 'extensions.subscription.callbackUrl is not under a callback URL this gateway allows (SUBSCRIPTION_CALLBACK_URLS).',
      code: 'BAD_REQUEST',
      extra: { reason: 'CALLBACK_URL_NOT_ALLOWED' },
    });
    expect(router.messages).toEqual([]);
  });

  it('calls the normalised URL the allowlist checked', async () => {
    const w = world();
    const answer = await w.open({ callbackUrl: `${router.base}x/../sub-normal` });
    expect(answer.status).toBe(200);
    expect(router.messages.map((m) => m.path)).toEqual(['/callback/sub-normal']);
    await w.subs.close();
  });

  it("wants the caller's key", async () => {
    const answer = await world().open({}, { who: null });
    expect(answer).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect((answer as { message: string }).message).toMatch(/Authorization: Bearer/);
  });

  it.each([
    ['key', 'with this API key'],
    ['address', 'from this address'],
  ] as const)('answers 429 when the %s opened too many', async (by, whose) => {
    const w = world();
    w.admission.limited = { retryAfterSeconds: 7, by };
    const answer = await w.open();
    expect(answer).toEqual({ status: 429, message: `Too many subscriptions opened ${whose}; retry later.`, code: 'RATE_LIMITED', retryAfterSeconds: 7, extra: { retryAfterSeconds: 7 } });
    expect(router.messages).toEqual([]);
  });

  it("answers a document's first refusal, formatted", async () => {
    const answer = await world().open({}, { query: 'subscription tooDeep { ticks(n: 1) }' });
    expect(answer).toEqual({ status: 400, message: 'Too deep.', code: 'DEPTH_LIMIT' });
  });

  it('takes subscriptions only', async () => {
    const answer = await world().open({}, { query: '{ ok }' });
    expect(answer).toEqual({ status: 400, message: 'extensions.subscription is for subscriptions; send queries and mutations as plain GraphQL over HTTP.', code: 'BAD_REQUEST', extra: { reason: 'NOT_A_SUBSCRIPTION' } });
    expect(router.messages).toEqual([]);
  });
});

